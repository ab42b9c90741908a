package io.ringkv.ring;

import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Predicate;

/**
 * How a ring spreads over its zones, as an operator watches it: the members and those up per
 * zone, and the ranges whose replicas are not spread as they could be. Pure, so tested directly.
 */
public final class ZoneSpread {

    /** A zone's members on the ring, and how many of them are up. */
    public record ZoneMembers(String zone, int members, int up) {
    }

    private ZoneSpread() {
    }

    /**
     * The ring's zones in name order, each with its members and those {@code up} says are. A member
     * without a zone is in none of them: "no zone" is not a place that fails as one.
     */
    public static List<ZoneMembers> members(HashRing ring, Predicate<String> up) {
        Map<String, int[]> counts = new TreeMap<>();
        for (Member member : ring.members()) {
            member.zone().ifPresent(zone -> {
                int[] count = counts.computeIfAbsent(zone, ignored -> new int[2]);
                count[0]++;
                if (up.test(member.name())) {
                    count[1]++;
                }
            });
        }
        return counts.entrySet().stream().map(entry -> new ZoneMembers(entry.getKey(), entry.getValue()[0], entry.getValue()[1]))
                .toList();
    }

    /**
     * The ring's ranges ({@link HashRing#ranges()}) whose {@code from} replicas are in fewer than
     * {@code from} zones although the ring's members are in at least {@code from}: a zone that
     * fails takes two of their replicas, where the ring could have lost one. The ring places
     * across every zone it has, so this happens where a member has no zone (it shares the zone of
     * none, and where it runs is unknown: counted as in no zone) or has not told it yet. With fewer
     * zones than {@code from}, no range could be spread better: none counts.
     *
     * @param from the replicas a key has, at most the ring's size
     */
    public static int rangesSharingZone(HashRing ring, int from) {
        long zones = ring.members().stream().map(Member::zone).flatMap(Optional::stream).distinct().count();
        if (zones < from) {
            return 0;
        }
        Map<String, String> zoneOf = ring.zones();
        int sharing = 0;
        for (TokenRange range : ring.ranges()) {
            Set<String> used = new HashSet<>();
            for (String replica : ring.replicasFor(range, from)) {
                String zone = zoneOf.get(replica);
                if (zone != null) {
                    used.add(zone);
                }
            }
            if (used.size() < from) {
                sharing++;
            }
        }
        return sharing;
    }
}
