package io.ringkv.ring;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.stream.IntStream;

import org.junit.jupiter.api.Test;

import com.dynatrace.hash4j.hashing.Hashing;

/** Issue 43: a key's replicas spread across zones, and placement as before where there is one zone or none. */
class ZonePlacementTest {

    private static final int TOKENS = 20_000;

    /** {@code n} members named node-0.., the i-th in {@code zones[i % zones.length]} ("" is none). */
    private static List<Member> members(int n, String... zones) {
        return IntStream.range(0, n).mapToObj(i -> Member.inZone("http://node-" + i + ":8080", zones[i % zones.length])).toList();
    }

    private static Map<String, String> zoneOf(List<Member> members) {
        Map<String, String> zones = new HashMap<>();
        members.forEach(member -> zones.put(member.name(), member.zone().orElse("(none)")));
        return zones;
    }

    @Test
    void replicasAreInDistinctZonesWhenThereAreAsManyZones() {
        List<List<Member>> rings = List.of(members(6, "a", "b", "c"), members(9, "a", "b", "c"), members(8, "a", "b", "c", "d"),
                members(5, "a", "a", "b", "b", "c"), members(7, "a", "b", "c", "a", "b", "c", "c"));
        SplittableRandom random = new SplittableRandom(7);
        for (List<Member> members : rings) {
            HashRing ring = new HashRing(members, HashRing.DEFAULT_VNODES);
            Map<String, String> zones = zoneOf(members);
            int zoneCount = new HashSet<>(zones.values()).size();
            for (int i = 0; i < TOKENS; i++) {
                List<String> replicas = ring.replicasForToken(random.nextLong(), zoneCount);
                assertThat(replicas.stream().map(zones::get).distinct()).as("%s", replicas).hasSize(zoneCount);
            }
        }
    }

    @Test
    void membersWithoutAZoneShareOneZoneOfTheirOwn() {
        // Zones a, b and "no zone": three, each holding one of three replicas.
        List<Member> members = members(6, "a", "", "b");
        HashRing ring = new HashRing(members, HashRing.DEFAULT_VNODES);
        Map<String, String> zones = zoneOf(members);
        SplittableRandom random = new SplittableRandom(8);
        for (int i = 0; i < TOKENS; i++) {
            List<String> replicas = ring.replicasForToken(random.nextLong(), 3);
            assertThat(replicas.stream().map(zones::get)).containsExactlyInAnyOrder("a", "b", "(none)");
        }
    }

    @Test
    void oneZoneOrNoneIsThePlacementBeforeZones() {
        SplittableRandom random = new SplittableRandom(9);
        for (int size : new int[] {1, 2, 3, 5, 8}) {
            for (String zone : new String[] {"", "eu-west-1a"}) {
                List<Member> members = members(size, zone);
                HashRing ring = new HashRing(members, 64);
                FirstDistinctClockwise before = new FirstDistinctClockwise(members, 64);
                for (int i = 0; i < TOKENS; i++) {
                    long token = random.nextLong();
                    assertThat(ring.replicasForToken(token, size)).isEqualTo(before.replicas(token, size));
                }
            }
        }
    }

    @Test
    void thePrimaryIsTheFirstMemberClockwiseAndFewerReplicasAreAPrefixOfMore() {
        SplittableRandom random = new SplittableRandom(10);
        for (List<Member> members : List.of(members(6, "a", "b", "c"), members(5, "a", "a", "b", "b", "c"),
                members(7, "a", "", "b"), members(4, "a", "b", "c", "d"))) {
            HashRing ring = new HashRing(members, 64);
            FirstDistinctClockwise before = new FirstDistinctClockwise(members, 64);
            for (int i = 0; i < TOKENS; i++) {
                long token = random.nextLong();
                List<String> all = ring.replicasForToken(token, members.size());
                assertThat(all).doesNotHaveDuplicates().hasSize(members.size());
                assertThat(all.get(0)).isEqualTo(before.replicas(token, 1).get(0));
                for (int count = 1; count < members.size(); count++) {
                    assertThat(ring.replicasForToken(token, count)).isEqualTo(all.subList(0, count));
                }
            }
        }
    }

    @Test
    void takesFromZonesNotUsedYetThenThoseSetAsideInTheOrderMet() {
        List<Member> members = members(6, "a", "a", "a", "b", "b", "c");
        HashRing ring = new HashRing(members, 16);
        Map<String, String> zones = zoneOf(members);
        FirstDistinctClockwise before = new FirstDistinctClockwise(members, 16);
        SplittableRandom random = new SplittableRandom(11);
        for (int i = 0; i < TOKENS; i++) {
            long token = random.nextLong();
            List<String> met = before.replicas(token, members.size());
            List<String> expected = new ArrayList<>();
            List<String> setAside = new ArrayList<>();
            Set<String> used = new HashSet<>();
            for (String member : met) {
                if (used.size() == 3) {
                    setAside.add(member);
                } else if (used.add(zones.get(member))) {
                    expected.add(member);
                } else {
                    setAside.add(member);
                }
            }
            expected.addAll(setAside);
            assertThat(ring.replicasForToken(token, members.size())).isEqualTo(expected);
        }
    }

    @Test
    void allTheKeysOfARangeHaveTheSameReplicas() {
        HashRing ring = new HashRing(members(6, "a", "b", "c"), 32);
        SplittableRandom random = new SplittableRandom(12);
        for (TokenRange range : ring.ranges()) {
            List<String> replicas = ring.replicasFor(range, 4);
            assertThat(ring.replicasForToken(range.upTo(), 4)).isEqualTo(replicas);
            assertThat(ring.replicasForToken(range.after() + 1, 4)).isEqualTo(replicas);
            long width = range.upTo() - range.after();
            if (Long.compareUnsigned(width, 1) > 0) {
                long inside = range.after() + 1 + Long.remainderUnsigned(random.nextLong(), width);
                assertThat(ring.replicasForToken(inside, 4)).isEqualTo(replicas);
            }
        }
    }

    @Test
    void placementDependsOnNamesAndZonesNotOnTheirOrder() {
        List<Member> members = members(6, "a", "b", "c");
        List<Member> reversed = new ArrayList<>(members);
        reversed.sort(Comparator.comparing(Member::name).reversed());
        HashRing ring = new HashRing(members, HashRing.DEFAULT_VNODES);
        HashRing other = new HashRing(reversed, HashRing.DEFAULT_VNODES);
        for (int i = 0; i < 1000; i++) {
            byte[] key = ("k" + i).getBytes(StandardCharsets.UTF_8);
            assertThat(other.replicasFor(key, 3)).isEqualTo(ring.replicasFor(key, 3));
        }
    }

    @Test
    void spreadsReplicasEvenlyOverSixMembersInThreeZones() {
        assertEvenReplicas(members(6, "a", "b", "c"));
    }

    @Test
    void spreadsReplicasEvenlyOverNineMembersInThreeZones() {
        assertEvenReplicas(members(9, "a", "b", "c"));
    }

    @Test
    void theLoneMemberOfAZoneHoldsAReplicaOfEveryKey() {
        List<Member> members = members(5, "a", "a", "b", "b", "c");
        HashRing ring = new HashRing(members, HashRing.DEFAULT_VNODES);
        Map<String, String> zones = zoneOf(members);
        String lone = members.get(4).name();
        for (int i = 0; i < 100_000; i++) {
            List<String> replicas = ring.replicasFor(("key-" + i).getBytes(StandardCharsets.UTF_8), 3);
            assertThat(replicas).doesNotHaveDuplicates().hasSize(3);
            assertThat(replicas.stream().map(zones::get)).containsExactlyInAnyOrder("a", "b", "c");
            // Expected, not a flaw: three replicas in three zones put one in c, and c has one member.
            assertThat(replicas).contains(lone);
        }
    }

    /** As HashRingTest's balance test, replication 3: every member's share of the replicas within 15% of the average. */
    private static void assertEvenReplicas(List<Member> members) {
        HashRing ring = new HashRing(members, HashRing.DEFAULT_VNODES);
        Map<String, Integer> held = new HashMap<>();
        SplittableRandom random = new SplittableRandom(42);
        int keys = 1_000_000;
        for (int i = 0; i < keys; i++) {
            byte[] key = ("key-" + random.nextLong()).getBytes(StandardCharsets.UTF_8);
            ring.replicasFor(key, 3).forEach(member -> held.merge(member, 1, Integer::sum));
        }
        double average = keys * 3.0 / members.size();
        double worst = held.values().stream().mapToInt(Integer::intValue).max().orElseThrow() / average;
        double least = held.values().stream().mapToInt(Integer::intValue).min().orElseThrow() / average;
        System.out.printf("replica balance, %d keys x 3 on %d members in 3 zones: max/avg = %.3f, min/avg = %.3f%n",
                keys, members.size(), worst, least);
        assertThat(held).hasSize(members.size());
        assertThat(worst).isLessThanOrEqualTo(1.15);
        assertThat(least).isGreaterThanOrEqualTo(0.85);
    }

    /** The placement before zones, copied: the first distinct members clockwise from a token. */
    private static final class FirstDistinctClockwise {

        private final long[] points;
        private final String[] owners;

        FirstDistinctClockwise(List<Member> members, int vnodes) {
            List<String> names = members.stream().map(Member::name).sorted().toList();
            record Point(long token, int index, String owner) {
            }
            List<Point> all = new ArrayList<>();
            for (String name : names) {
                for (int v = 0; v < vnodes; v++) {
                    long token = Hashing.xxh3_64().hashBytesToLong((name + "#" + v).getBytes(StandardCharsets.UTF_8));
                    all.add(new Point(token, all.size(), name));
                }
            }
            all.sort(Comparator.comparingLong(Point::token).thenComparingInt(Point::index));
            points = all.stream().mapToLong(Point::token).toArray();
            owners = all.stream().map(Point::owner).toArray(String[]::new);
        }

        List<String> replicas(long token, int count) {
            int start = Arrays.binarySearch(points, token);
            if (start < 0) {
                start = -start - 1;
            }
            List<String> replicas = new ArrayList<>(count);
            for (int step = 0; replicas.size() < count; step++) {
                String owner = owners[(start + step) % points.length];
                if (!replicas.contains(owner)) {
                    replicas.add(owner);
                }
            }
            return replicas;
        }
    }

    /** Two rings place alike when they have the same members in the same zones; a member's other attributes play no part. */
    @Test
    void ringsPlaceAlikeWithTheSameMembersInTheSameZones() {
        HashRing zoned = new HashRing(List.of(Member.inZone("a", "z1"), Member.inZone("b", "z2"), Member.named("c")), 16);
        HashRing sameZones = new HashRing(List.of(Member.named("c"), new Member("b", Map.of("zone", "z2", "disk", "ssd")),
                Member.inZone("a", "z1")), 16);
        HashRing movedZone = new HashRing(List.of(Member.inZone("a", "z1"), Member.inZone("b", "z1"), Member.named("c")), 16);
        assertThat(zoned.placesAs(sameZones)).isTrue();
        assertThat(zoned.placesAs(movedZone)).isFalse();
        assertThat(zoned.zoneOf("b")).contains("z2");
        assertThat(zoned.zoneOf("c")).as("no zone").isEmpty();
        assertThat(zoned.zoneOf("d")).as("not a member").isEmpty();
        assertThat(zoned.zones()).isEqualTo(Map.of("a", "z1", "b", "z2"));
    }

    /**
     * A member added, in a zone of its own or an existing one, only takes keys: every key's new
     * replicas are its old ones or the new member. So a join's hand-over (the joiner pulls) moves
     * all the data that moves, zones or not.
     */
    @Test
    void aMemberAddedOnlyTakesKeys() {
        List<Member> before = List.of(Member.inZone("a1", "a"), Member.inZone("a2", "a"), Member.inZone("b1", "b"),
                Member.inZone("b2", "b"), Member.inZone("b3", "b"));
        for (Member added : List.of(Member.inZone("c1", "c"), Member.inZone("a3", "a"), Member.inZone("b4", "b"))) {
            HashRing old = new HashRing(before, 64);
            List<Member> with = new ArrayList<>(before);
            with.add(added);
            HashRing grown = new HashRing(with, 64);
            java.util.Random random = new java.util.Random(7);
            for (int i = 0; i < 20_000; i++) {
                long token = random.nextLong();
                Set<String> allowed = new HashSet<>(old.replicasForToken(token, 3));
                allowed.add(added.name());
                assertThat(grown.replicasForToken(token, 3)).as("adding %s", added.name()).isSubsetOf(allowed);
            }
        }
    }
}
