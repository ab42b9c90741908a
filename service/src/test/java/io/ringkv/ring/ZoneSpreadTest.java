package io.ringkv.ring;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.IntStream;

import org.junit.jupiter.api.Test;

import io.ringkv.ring.ZoneSpread.ZoneMembers;

/** Zones as an operator watches them: members up per zone, and ranges whose replicas could be spread over more zones. */
class ZoneSpreadTest {

    /** {@code n} members named node-0.., the i-th in {@code zones[i % zones.length]} ("" is none). */
    private static List<Member> members(int n, String... zones) {
        return IntStream.range(0, n).mapToObj(i -> Member.inZone("http://node-" + i + ":8080", zones[i % zones.length])).toList();
    }

    private static HashRing ring(List<Member> members) {
        return new HashRing(members, HashRing.DEFAULT_VNODES);
    }

    @Test
    void noRangeSharesAZoneWithoutZones() {
        assertThat(ZoneSpread.rangesSharingZone(ring(members(6, "")), 3)).isZero();
    }

    @Test
    void noRangeSharesAZoneWithSixMembersInThreeZones() {
        assertThat(ZoneSpread.rangesSharingZone(ring(members(6, "a", "b", "c")), 3)).isZero();
        assertThat(ZoneSpread.rangesSharingZone(ring(members(6, "a", "b", "c")), 2)).isZero();
    }

    @Test
    void aMemberWithoutAZoneAmongZonedOnesLeavesRangesInTooFewZones() {
        List<Member> members = new ArrayList<>(members(6, "a", "b", "c"));
        members.add(Member.named("http://late:8080"));
        HashRing ring = ring(members);

        int sharing = ZoneSpread.rangesSharingZone(ring, 3);

        // Exactly the ranges the zoneless member holds a replica of: the others span a, b and c.
        long holdingOne = ring.ranges().stream().filter(range -> ring.replicasFor(range, 3).contains("http://late:8080")).count();
        assertThat(sharing).isPositive().isEqualTo((int) holdingOne).isLessThan(ring.ranges().size());
    }

    @Test
    void fewerZonesThanReplicasIsNotDegraded() {
        assertThat(ZoneSpread.rangesSharingZone(ring(members(4, "a", "b")), 3)).isZero();
        List<Member> members = new ArrayList<>(members(4, "a", "b"));
        members.add(Member.named("http://late:8080"));
        assertThat(ZoneSpread.rangesSharingZone(ring(members), 3)).as("two zones and a member without one").isZero();
    }

    @Test
    void countsTheMembersAndThoseUpPerZoneLeavingOutMembersWithoutOne() {
        List<Member> members = new ArrayList<>(members(5, "zone-b", "zone-a"));
        members.add(Member.named("http://late:8080"));
        Set<String> up = Set.of("http://node-0:8080", "http://node-1:8080", "http://node-3:8080", "http://late:8080");

        assertThat(ZoneSpread.members(ring(members), up::contains)).containsExactly(
                new ZoneMembers("zone-a", 2, 2), new ZoneMembers("zone-b", 3, 1));
        assertThat(ZoneSpread.members(ring(members(3, "")), up::contains)).isEmpty();
    }
}
