package io.ringkv.ring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.IntStream;

import org.junit.jupiter.api.Test;

class ClusterMembershipTest {

    private final ClusterMembership membership = ClusterMembership.fixed(Member.named("a"), Member.named(List.of("a", "b", "c")), 16);

    /** A member's attributes, told in a ping or an answer, are the ring's at once: no data moves for them. */
    @Test
    void whatAMemberTellsOfItselfIsTakenAtOnceWithoutANewVersion() {
        long version = membership.view().version();
        membership.told("b", Map.of(Member.RECORD_FORMAT, "2"));
        assertThat(membership.ring().members()).contains(new Member("b", Map.of(Member.RECORD_FORMAT, "2")));
        assertThat(membership.ring().members().stream().filter(member -> member.name().equals("b")).findFirst().orElseThrow()
                .recordFormat()).isEqualTo(2);
        assertThat(membership.view().version()).isEqualTo(version);
        membership.told("x", Map.of(Member.RECORD_FORMAT, "2"));
        assertThat(membership.ring().names()).as("not a member: ignored").containsExactlyInAnyOrder("a", "b", "c");
        assertThat(Member.named("c").recordFormat()).as("a member that told none reads the first").isEqualTo(1);
        assertThat(new Member("c", Map.of(Member.RECORD_FORMAT, "x2")).recordFormat()).as("nor nonsense").isEqualTo(1);
    }

    @Test
    void aJoiningMemberTakesWritesButNoReadsUntilItIsNormal() {
        membership.setState("c", MemberState.JOINING);
        var view = membership.view();
        assertThat(view.current().names()).containsExactly("a", "b");
        assertThat(view.future().names()).containsExactlyInAnyOrder("a", "b", "c");

        assertThat(view.joining()).containsOnlyKeys("c");

        membership.setState("c", MemberState.NORMAL);
        assertThat(membership.view().current()).isSameAs(membership.view().ring());
        assertThat(membership.view().joining()).isEmpty();
    }

    @Test
    void membersJoiningTogetherEachGetTheRingOfThemAloneWithTheCurrentOnes() {
        var five = ClusterMembership.fixed(Member.named("a"), Member.named(List.of("a", "b", "c", "d", "e")), 16);
        five.setState("d", MemberState.JOINING);
        five.setState("e", MemberState.JOINING);
        var view = five.view();
        assertThat(view.current().names()).containsExactlyInAnyOrder("a", "b", "c");
        assertThat(view.joining().get("d").names()).containsExactlyInAnyOrder("a", "b", "c", "d");
        assertThat(view.joining().get("e").names()).containsExactlyInAnyOrder("a", "b", "c", "e");
        assertThat(view.future().names()).hasSize(5);
    }

    @Test
    void aLeavingMemberServesReadsButIsLeftOutOfTheFuture() {
        membership.setState("b", MemberState.LEAVING);
        var view = membership.view();
        assertThat(view.current().names()).containsExactlyInAnyOrder("a", "b", "c");
        assertThat(view.future().names()).containsExactly("a", "c");
    }

    /**
     * Two of five members scaled away at once (the chart's Parallel pod policy) own some keys
     * together with one other member. Once both handed their data over and said LEFT, reads and
     * the acks of a write come from the three that stay: none waits for the two as they exit.
     */
    @Test
    void membersThatLeftAreAskedForNothing() {
        var five = ClusterMembership.fixed(Member.named("a"), Member.named(List.of("a", "b", "c", "d", "e")), 16);
        five.setState("d", MemberState.LEAVING);
        five.setState("e", MemberState.LEAVING);
        byte[] sharedByTheTwo = IntStream.range(0, 10_000).mapToObj(i -> ("key-" + i).getBytes(StandardCharsets.UTF_8))
                .filter(key -> five.view().current().replicasFor(key, 3).containsAll(List.of("d", "e")))
                .findFirst().orElseThrow();

        five.setState("d", MemberState.LEFT);
        five.setState("e", MemberState.LEFT);

        var view = five.view();
        assertThat(view.current().names()).containsExactlyInAnyOrder("a", "b", "c");
        assertThat(view.future().names()).containsExactlyInAnyOrder("a", "b", "c");
        assertThat(view.joining()).as("not taken for joiners").isEmpty();
        assertThat(view.current().replicasFor(sharedByTheTwo, 3)).containsExactlyInAnyOrder("a", "b", "c");
        assertThat(five.othersHoldData()).isTrue();
        assertThat(MemberState.LEFT.departing()).isTrue();
    }

    @Test
    void aMemberThatLeftTheRingForgetsItsState() {
        membership.setState("b", MemberState.LEAVING);
        membership.update(Member.named(Set.of("a", "c")));
        assertThat(membership.state("b")).isEqualTo(MemberState.NORMAL);
        membership.update(Member.named(Set.of("a", "b", "c")));
        assertThat(membership.view().future().names()).as("back, with no state left over").contains("b");
    }

    /**
     * The decision of a node whose store is not a member's, with a static peer list: it pulls
     * before it serves only if a peer said it holds data; a peer that said nothing (down, or a new
     * cluster's node not started yet) gives it nothing to wait for.
     */
    @Test
    void aNewStoreAmongListedPeersPullsOnlyIfOneSaysItHoldsData() {
        var joining = ClusterMembership.fixedJoining(Member.named("a"), Member.named(List.of("a", "b", "c")), 16, RememberedZones.NONE);
        joining.setState("a", MemberState.JOINING);
        assertThat(joining.isKnown()).as("not before it asked its peers").isFalse();
        assertThat(joining.othersHoldData()).as("no peer answered yet").isFalse();

        joining.setState("b", MemberState.JOINING);
        assertThat(joining.othersHoldData()).as("a new cluster: every member joining").isFalse();
        assertThat(joining.view().current().names()).containsExactlyInAnyOrder("a", "b", "c");

        joining.setState("c", MemberState.NORMAL);
        assertThat(joining.othersHoldData()).isTrue();
        assertThat(joining.view().current().names()).as("reads ask only who said it holds data").containsExactly("c");
        assertThat(joining.view().joining().get("a").names()).as("what it pulls and takes writes for")
                .containsExactlyInAnyOrder("a", "c");
    }

    /**
     * Once the joining node holds its ranges, a listed member it never heard from is presumed to
     * hold data, as on a node restarted on its data: a down member keeps its ranges, and a new
     * cluster whose last node is not up yet still takes 2/3 with two.
     */
    @Test
    void aJoinedNodePresumesEveryListedMemberHoldsDataUntilItSaysOtherwise() {
        var joining = ClusterMembership.fixedJoining(Member.named("a"), Member.named(List.of("a", "b", "c")), 16, RememberedZones.NONE);
        joining.setState("a", MemberState.JOINING);
        joining.setState("b", MemberState.NORMAL);
        assertThat(joining.state("c")).as("not heard from while it joins").isEqualTo(MemberState.JOINING);

        joining.setState("a", MemberState.NORMAL);
        assertThat(joining.state("c")).isEqualTo(MemberState.NORMAL);
        assertThat(joining.view().current()).isSameAs(joining.view().ring());

        joining.setState("c", MemberState.JOINING);
        assertThat(joining.view().current().names()).as("c said it joins").containsExactlyInAnyOrder("a", "b");
    }

    /** A node restarted on its own data presumes what it saw: every listed member holds data, and there is nothing to pull. */
    @Test
    void aStoreThatIsAMembersKnowsItsListedPeersHoldData() {
        assertThat(membership.isKnown()).isTrue();
        assertThat(membership.othersHoldData()).isTrue();
        assertThat(membership.view().current()).isSameAs(membership.view().ring());
    }

    @Test
    void aMemberNotHeardFromIsPresumedToHoldDataOnlyIfItDid() {
        var intended = ClusterMembership.discovered(Member.named("a"), 16, new Remembered(Set.of("b")), RememberedZones.NONE);
        intended.update(Member.named(Set.of("a", "b", "c")));
        assertThat(intended.state("b")).as("held data when this node last knew").isEqualTo(MemberState.NORMAL);
        assertThat(intended.state("c")).as("never heard of: a new pod").isEqualTo(MemberState.JOINING);
        assertThat(intended.view().current().names()).containsExactlyInAnyOrder("a", "b");
        assertThat(intended.view().joining()).containsOnlyKeys("c");

        intended.setState("c", MemberState.NORMAL);
        assertThat(intended.view().current().names()).as("it told its state").containsExactlyInAnyOrder("a", "b", "c");

        var newVolume = ClusterMembership.discovered(Member.named("a"), 16, new Remembered(Set.of()), RememberedZones.NONE);
        newVolume.update(Member.named(Set.of("a", "b", "c")));
        assertThat(newVolume.othersHoldData()).as("a pod on a new volume, its peers not heard from").isFalse();
        newVolume.setState("b", MemberState.NORMAL);
        assertThat(newVolume.othersHoldData()).isTrue();
    }

    /** Who holds data is remembered once the ring is known, and each time it changes; not before. */
    @Test
    void theMembersHoldingDataAreRememberedOnceTheRingIsKnown() {
        Remembered remembered = new Remembered(Set.of("b"));
        var intended = ClusterMembership.discovered(Member.named("a"), 16, remembered, RememberedZones.NONE);
        intended.update(Member.named(Set.of("a", "b", "c")));
        assertThat(remembered.holders).as("not known yet: the last ring known stays remembered").containsExactly("b");

        intended.markKnown();
        assertThat(remembered.holders).containsExactlyInAnyOrder("a", "b");
        intended.setState("c", MemberState.NORMAL);
        assertThat(remembered.holders).containsExactlyInAnyOrder("a", "b", "c");
        intended.setState("b", MemberState.LEFT);
        assertThat(remembered.holders).containsExactlyInAnyOrder("a", "c");
    }

    /** What the ledger would remember, in memory. */
    private static final class Remembered implements DataHolders {
        private volatile Set<String> holders;

        Remembered(Set<String> holders) {
            this.holders = holders;
        }

        @Override
        public boolean heldData(String member) {
            return holders.contains(member);
        }

        @Override
        public void rememberDataHolders(Set<String> holders) {
            this.holders = Set.copyOf(holders);
        }
    }

    /**
     * What members tell of themselves changes the ring's members. A zone places keys (HashRing),
     * so it makes a new version of the ring; other attributes do not, nor move a key.
     */
    @Test
    void aZoneIsANewVersionOfTheRingOtherAttributesAreNot() {
        HashRing before = membership.ring();
        List<ClusterMembership.View> heard = new java.util.ArrayList<>();
        membership.onChange(heard::add);

        membership.update(List.of(Member.named("a"), new Member("b", Map.of("disk", "ssd")), Member.named("c")));
        assertThat(membership.view().version()).isEqualTo(1);
        assertThat(heard).as("told as a change of the view").hasSize(1);
        for (int i = 0; i < 1000; i++) {
            byte[] key = ("k" + i).getBytes(StandardCharsets.UTF_8);
            assertThat(membership.ring().replicasFor(key, 2)).isEqualTo(before.replicasFor(key, 2));
        }

        membership.update(List.of(Member.named("a"), Member.inZone("b", "zone-b"), Member.inZone("c", "zone-c")));
        assertThat(membership.view().version()).as("zones place keys").isEqualTo(2);
        assertThat(membership.ring().zones()).isEqualTo(Map.of("b", "zone-b", "c", "zone-c"));
        membership.update(List.of(Member.named("a"), Member.inZone("b", "zone-b"), Member.inZone("c", "zone-c")));
        assertThat(heard).as("nothing new, nothing told").hasSize(2);
    }

    /**
     * A member that has not told its zone (down since this node restarted, or not asked yet) is
     * placed in the zone remembered for it, as its peers still place it; once the ring is known,
     * what is remembered follows it.
     */
    @Test
    void aMemberNotHeardFromIsInTheZoneRememberedForIt() {
        RememberingZones remembered = new RememberingZones(Map.of("b", "zone-b", "c", "zone-c"));
        var restarted = ClusterMembership.fixed(Member.inZone("a", "zone-a"), Member.named(List.of("a", "b", "c")), 16, remembered);
        assertThat(restarted.ring().zones()).isEqualTo(Map.of("a", "zone-a", "b", "zone-b", "c", "zone-c"));

        restarted.update(List.of(Member.inZone("a", "zone-a"), Member.named("b"), Member.inZone("c", "zone-c")));
        assertThat(restarted.view().version()).as("b not heard from yet: placed as before").isEqualTo(1);
        restarted.setState("c", MemberState.JOINING);
        assertThat(remembered.zones).isEqualTo(Map.of("a", "zone-a", "b", "zone-b", "c", "zone-c"));

        restarted.update(List.of(Member.inZone("a", "zone-a"), Member.inZone("c", "zone-c")));
        assertThat(remembered.zones).as("b left the ring").isEqualTo(Map.of("a", "zone-a", "c", "zone-c"));
    }

    /** What the ledger would remember of zones, in memory. */
    private static final class RememberingZones implements RememberedZones {
        private volatile Map<String, String> zones;

        RememberingZones(Map<String, String> zones) {
            this.zones = zones;
        }

        @Override
        public java.util.Optional<String> zoneOf(String member) {
            return java.util.Optional.ofNullable(zones.get(member));
        }

        @Override
        public void rememberZones(Map<String, String> zones) {
            this.zones = Map.copyOf(zones);
        }
    }

    @Test
    void thisNodeIsAsItIsSetUpWhateverTheListSays() {
        var zoned = ClusterMembership.fixed(Member.inZone("a", "zone-a"), Member.named(List.of("a", "b")), 16);
        assertThat(zoned.ring().members()).containsExactly(Member.inZone("a", "zone-a"), Member.named("b"));
        assertThat(zoned.selfMember().zone()).contains("zone-a");
    }

    /**
     * A node moving zones is a leave, then a join in its new zone: reads ask the rings whose owners
     * hold its keys throughout (with it in its old zone, then without it), and its new zone is a
     * new version of the ring only once it joins there.
     */
    @Test
    void aZoneMoveIsALeaveThenAJoinInTheNewZone() {
        List<Member> members = List.of(Member.inZone("a", "x"), Member.inZone("b", "y"), Member.inZone("c", "x"),
                Member.inZone("d", "y"));
        var moving = ClusterMembership.fixed(Member.inZone("d", "y"), members, 16);
        moving.planZoneMove("z");
        assertThat(moving.selfMember().zone()).as("where its data is, until it moves").contains("y");
        long version = moving.view().version();

        moving.setState("d", MemberState.LEAVING);
        assertThat(moving.view().current().zoneOf("d")).contains("y");
        assertThat(moving.view().future().names()).containsExactly("a", "b", "c");

        moving.setState("d", MemberState.JOINING);
        moving.moveToPlannedZone();
        var view = moving.view();
        assertThat(moving.selfMember().zone()).contains("z");
        assertThat(moving.zoneToMoveTo()).isEmpty();
        assertThat(view.version()).isGreaterThan(version);
        assertThat(view.current().names()).as("reads: the ring without it, which its hand-over filled").containsExactly("a", "b", "c");
        assertThat(view.future().zoneOf("d")).contains("z");
        assertThat(view.joining().get("d").zoneOf("d")).contains("z");
    }

    @Test
    void aZoneMoveIsFromOneZoneToAnother() {
        var unzoned = ClusterMembership.fixed(Member.named("a"), Member.named(List.of("a", "b")), 16);
        assertThatIllegalArgumentException().isThrownBy(() -> unzoned.planZoneMove("z"));
        var zoned = ClusterMembership.fixed(Member.inZone("a", "x"), Member.named(List.of("a", "b")), 16);
        assertThatIllegalArgumentException().isThrownBy(() -> zoned.planZoneMove("x"));
        assertThatIllegalStateException().isThrownBy(zoned::moveToPlannedZone);
    }
}
