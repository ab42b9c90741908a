package io.ringkv.ring;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

import com.dynatrace.hash4j.hashing.Hasher64;
import com.dynatrace.hash4j.hashing.Hashing;

/**
 * A consistent-hash ring with virtual nodes. Each member is placed at {@code vnodes} points, the
 * hashes of its stable name; of its attributes, only its zone plays a part, in which members a
 * key's replicas are (below), never in where the points are.
 *
 * <p>A key's replicas, as Cassandra's NetworkTopologyStrategy places them across racks: walk
 * clockwise from the key's hash over the points. Each member met whose zone has not been used yet
 * is taken at once; one met whose zone has been is set aside, in the order met. Once every zone of
 * the ring has been used, the members set aside follow in that order, then the others in the order
 * the walk meets them. The first {@code count} of that order are the replicas. So:
 * <ul>
 * <li>with at least {@code count} zones, the replicas are in {@code count} distinct zones;
 * <li>the primary is the first member clockwise, zones or not;
 * <li>the replicas for a smaller count are always a prefix of those for a larger one;
 * <li>members without a zone count as one zone of their own, "no zone", which they share: where
 *     no member has a zone, or all have the same one, the replicas are the first distinct
 *     members clockwise, as before zones.
 * </ul>
 *
 * <p>Where the rings before and after have one zone (or none), adding or removing a member moves
 * only the keys next to its points. Where they have several, it may also change the replicas of
 * keys further from them: a new member takes, in the walks that meet its zone first through it,
 * the place of a member they set aside, and one removed gives its place to one set aside
 * (Cassandra's placement has the same property). A member changing its zone moves data too.
 *
 * <p>Immutable: a membership change builds a new ring.
 */
public final class HashRing {

    /** Enough points per member for an even share (HashRingTest measures it); ringkv.cluster.vnodes' default. */
    public static final int DEFAULT_VNODES = 256;

    /** XXH3: fast on short keys and well distributed; the ring depends on it never changing. */
    private static final Hasher64 HASH = Hashing.xxh3_64();

    /** A member's marks in {@link #acrossZones}; a zone's is {@code USED} or not. */
    private static final byte UNMET = 0;
    private static final byte TAKEN = 1;
    private static final byte SET_ASIDE = 2;
    private static final byte USED = 1;

    private final List<Member> members;
    private final Map<String, Member> byName;
    private final List<String> names;
    private final long[] points;
    private final int[] owners;
    /** Each member's zone as a number, members without one sharing one number: what the walk compares. */
    private final int[] memberZones;
    private final int zoneCount;

    /** @param members distinct names; where one is given twice, the last one given stands */
    public HashRing(Collection<Member> members, int vnodes) {
        if (members.isEmpty()) {
            throw new IllegalArgumentException("a ring needs at least one member");
        }
        if (vnodes < 1) {
            throw new IllegalArgumentException("vnodes must be positive");
        }
        Map<String, Member> byName = new TreeMap<>();
        members.forEach(member -> byName.put(member.name(), member));
        this.members = List.copyOf(byName.values());
        this.byName = Map.copyOf(byName);
        this.names = List.copyOf(byName.keySet());
        int count = this.members.size() * vnodes;
        long[] unsortedPoints = new long[count];
        Integer[] order = new Integer[count];
        for (int m = 0; m < this.members.size(); m++) {
            for (int v = 0; v < vnodes; v++) {
                int i = m * vnodes + v;
                unsortedPoints[i] = HASH.hashBytesToLong(
                        (names.get(m) + "#" + v).getBytes(StandardCharsets.UTF_8));
                order[i] = i;
            }
        }
        // Ties between two members' points (astronomically rare) fall to the member sorted first.
        Arrays.sort(order, (a, b) -> {
            int byPoint = Long.compare(unsortedPoints[a], unsortedPoints[b]);
            return byPoint != 0 ? byPoint : Integer.compare(a, b);
        });
        points = new long[count];
        owners = new int[count];
        for (int i = 0; i < count; i++) {
            points[i] = unsortedPoints[order[i]];
            owners[i] = order[i] / vnodes;
        }
        Map<Optional<String>, Integer> zoneNumbers = new HashMap<>();
        memberZones = new int[this.members.size()];
        for (int m = 0; m < memberZones.length; m++) {
            memberZones[m] = zoneNumbers.computeIfAbsent(this.members.get(m).zone(), zone -> zoneNumbers.size());
        }
        zoneCount = zoneNumbers.size();
    }

    /** The members in name order. */
    public List<Member> members() {
        return members;
    }

    /** A member's zone; empty for a member without one, or not on this ring. */
    public Optional<String> zoneOf(String name) {
        Member member = byName.get(name);
        return member == null ? Optional.empty() : member.zone();
    }

    /**
     * Whether another ring places every key as this one does: the same members in the same zones
     * (with the same number of points each, as one membership's rings have).
     */
    public boolean placesAs(HashRing other) {
        return names.equals(other.names) && names.stream().allMatch(name -> zoneOf(name).equals(other.zoneOf(name)));
    }

    /** The members' zones by name, for those that have one: what a log line or a ledger says. */
    public Map<String, String> zones() {
        Map<String, String> zones = new TreeMap<>();
        members.forEach(member -> member.zone().ifPresent(zone -> zones.put(member.name(), zone)));
        return zones;
    }

    /** The members' names, in order. */
    public List<String> names() {
        return names;
    }

    public int size() {
        return members.size();
    }

    /** A key's position on the ring. */
    public static long token(byte[] key) {
        return HASH.hashBytesToLong(key);
    }

    /** The names of the key's {@code count} replicas (see the class comment), its primary first. */
    public List<String> replicasFor(byte[] key, int count) {
        return replicasForToken(token(key), count);
    }

    /** The names of a token's {@code count} replicas (see the class comment), its primary first. */
    public List<String> replicasForToken(long token, int count) {
        if (count < 1 || count > members.size()) {
            throw new IllegalArgumentException("count must be between 1 and " + members.size());
        }
        int start = Arrays.binarySearch(points, token);
        if (start < 0) {
            start = -start - 1;
        }
        return zoneCount == 1 ? firstDistinct(start, count) : acrossZones(start, count);
    }

    /** The first {@code count} distinct members met walking from the point {@code start}: one zone's replicas. */
    private List<String> firstDistinct(int start, int count) {
        List<String> replicas = new ArrayList<>(count);
        boolean[] taken = new boolean[members.size()];
        for (int step = 0; replicas.size() < count; step++) {
            int owner = owner(start, step);
            if (!taken[owner]) {
                taken[owner] = true;
                replicas.add(names.get(owner));
            }
        }
        return replicas;
    }

    /**
     * The class comment's walk from the point {@code start}. It ends within one turn, which meets
     * every member. Set-aside members are not listed: a second walk over the steps taken meets
     * them again in the order they were first met.
     */
    private List<String> acrossZones(int start, int count) {
        List<String> replicas = new ArrayList<>(count);
        // One array, as firstDistinct allocates one: a mark for each member, then one for each zone (USED or not).
        byte[] marks = new byte[members.size() + zoneCount];
        int zonesUsed = 0;
        int step = 0;
        for (; zonesUsed < zoneCount && replicas.size() < count; step++) {
            int owner = owner(start, step);
            if (marks[owner] == UNMET) {
                int zone = members.size() + memberZones[owner];
                if (marks[zone] == USED) {
                    marks[owner] = SET_ASIDE;
                } else {
                    marks[zone] = USED;
                    zonesUsed++;
                    marks[owner] = TAKEN;
                    replicas.add(names.get(owner));
                }
            }
        }
        // Every zone is used (or count reached): the members set aside follow, then the others met.
        for (int again = 0; again < step && replicas.size() < count; again++) {
            int owner = owner(start, again);
            if (marks[owner] == SET_ASIDE) {
                marks[owner] = TAKEN;
                replicas.add(names.get(owner));
            }
        }
        for (; replicas.size() < count; step++) {
            int owner = owner(start, step);
            if (marks[owner] == UNMET) {
                marks[owner] = TAKEN;
                replicas.add(names.get(owner));
            }
        }
        return replicas;
    }

    /** The member at the point {@code step} points clockwise from the point {@code start}. */
    private int owner(int start, int step) {
        return owners[(start + step) % points.length];
    }

    /**
     * The ring cut at every point into ranges, in ring order; all the keys of a range have the
     * same replicas (those of its end point): the walk from any token of a range starts at the
     * same point, its end.
     */
    public List<TokenRange> ranges() {
        List<TokenRange> ranges = new ArrayList<>(points.length);
        for (int i = 0; i < points.length; i++) {
            long after = points[i == 0 ? points.length - 1 : i - 1];
            ranges.add(new TokenRange(after, points[i]));
        }
        return ranges;
    }

    /** The {@code count} replicas of all a range's keys. */
    public List<String> replicasFor(TokenRange range, int count) {
        return replicasForToken(range.upTo(), count);
    }

    @Override
    public String toString() {
        return "HashRing" + names;
    }
}
