package io.ringkv.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

import io.ringkv.peer.wire.PeerStatus;
import io.ringkv.ring.ClusterMembership;
import io.ringkv.ring.Member;
import io.ringkv.ring.MemberState;
import io.ringkv.ring.RingNotKnownException;

/**
 * A node whose discovery has not found its members yet places no key: its ring is itself alone,
 * and a read from it could hand back values its peers deleted (seen on CI: a node back on an old
 * volume answered 200 for a purged key in the second before its first discovery round ended).
 */
class ReplicaDirectoryTest {

    private static final String SELF = "http://node3:8080";
    private static final String NODE_1 = "http://node1:8080";
    private static final String NODE_2 = "http://node2:8080";

    @Test
    void placesNoKeyUntilDiscoveryHasFoundTheMembers() {
        ClusterMembership membership = ClusterMembership.discovered(Member.named(SELF), 16);
        // Found behind its peers' purges by a peer's PING before its own first round: JOINING, ring of itself.
        membership.setState(SELF, MemberState.JOINING);
        try (ReplicaDirectory directory = new ReplicaDirectory(membership, null, null, null, null, null)) {
            assertThatThrownBy(directory::placement).isInstanceOf(RingNotKnownException.class);
            assertThatThrownBy(directory::all).isInstanceOf(RingNotKnownException.class);

            membership.update(Member.named(Set.of(SELF, "http://node1:8080", "http://node2:8080")));
            membership.markKnown();

            assertThat(directory.placement().current().names())
                    .as("reads ask the members that hold data, not the one behind")
                    .containsExactlyInAnyOrder("http://node1:8080", "http://node2:8080");
            assertThat(directory.placement().size()).isEqualTo(2);
        }
    }

    /** A member's own ping tells its state as its answers do: a node that turned NORMAL is read from at once. */
    @Test
    void theStateAMemberTellsInItsPingIsHeard() {
        ClusterMembership membership = ClusterMembership.fixed(Member.named(SELF), Member.named(List.of(SELF, NODE_1, NODE_2)), 16);
        try (ReplicaDirectory directory = new ReplicaDirectory(membership, null, null, null, null, null)) {
            directory.toldInPing(NODE_2, status(MemberState.JOINING));
            assertThat(directory.placement().current().names()).containsExactlyInAnyOrder(SELF, NODE_1);

            directory.toldInPing(NODE_2, status(MemberState.NORMAL));
            assertThat(directory.placement().current().names()).hasSize(3);

            directory.toldInPing(NODE_2, PeerStatus.UNKNOWN);
            assertThat(membership.state(NODE_2)).as("a ping that tells no state changes none").isEqualTo(MemberState.NORMAL);
        }
    }

    /**
     * A member that turns NORMAL tells its peers at once; an answer it gave a probe just before,
     * JOINING, may arrive after that. It must not undo it: the peer would leave the member out of
     * its reads until its next probe.
     */
    @Test
    void anAnswerThatCrossedTheMembersOwnPingDoesNotUndoIt() {
        ClusterMembership membership = ClusterMembership.fixed(Member.named(SELF), Member.named(List.of(SELF, NODE_1, NODE_2)), 16);
        try (ReplicaDirectory directory = new ReplicaDirectory(membership, null, null, null, null, null)) {
            long probeSent = System.nanoTime();
            directory.toldInPing(NODE_2, status(MemberState.NORMAL));
            directory.answered(NODE_2, status(MemberState.JOINING), probeSent);
            assertThat(membership.state(NODE_2)).isEqualTo(MemberState.NORMAL);

            directory.answered(NODE_2, status(MemberState.JOINING), System.nanoTime());
            assertThat(membership.state(NODE_2)).as("an answer to a later probe").isEqualTo(MemberState.JOINING);
        }
    }

    /** What a member tells passes through the vetting (PurgeHorizonCheck: a store behind this node's purges is not read from). */
    @Test
    void aStateTheVettingKnowsBetterIsHeardInstead() {
        ClusterMembership membership = ClusterMembership.fixed(Member.named(SELF), Member.named(List.of(SELF, NODE_1, NODE_2)), 16);
        try (ReplicaDirectory directory = new ReplicaDirectory(membership, null, null, null, null, null)) {
            directory.vetStates((member, status, told) -> member.equals(NODE_2) ? MemberState.JOINING : told);
            directory.answered(NODE_2, status(MemberState.NORMAL), System.nanoTime());
            directory.answered(NODE_1, status(MemberState.NORMAL), System.nanoTime());
            assertThat(directory.placement().current().names()).containsExactlyInAnyOrder(SELF, NODE_1);
            directory.toldInPing(NODE_2, status(MemberState.NORMAL));
            assertThat(membership.state(NODE_2)).isEqualTo(MemberState.JOINING);
        }
    }

    /**
     * With DNS discovery a member's ping is not heard, but one that tells a change (a member that
     * handed its data over says LEFT) makes this node ask it back at once: the decision.
     */
    @Test
    void aPingTellingAnotherStateThanTheKnownOneIsAChange() {
        ClusterMembership membership = ClusterMembership.fixed(Member.named(SELF), Member.named(List.of(SELF, NODE_1, NODE_2)), 16);
        try (ReplicaDirectory directory = new ReplicaDirectory(membership, null, null, null, null, null)) {
            assertThat(directory.differsFromKnown(NODE_2, status(MemberState.NORMAL))).isFalse();
            assertThat(directory.differsFromKnown(NODE_2, status(MemberState.LEFT))).isTrue();
            assertThat(directory.differsFromKnown(NODE_2, PeerStatus.UNKNOWN)).as("no state told").isFalse();

            // A store behind this node's purges says NORMAL; this node hears it as JOINING already.
            directory.vetStates((member, status, told) -> MemberState.JOINING);
            membership.setState(NODE_2, MemberState.JOINING);
            assertThat(directory.differsFromKnown(NODE_2, status(MemberState.NORMAL))).as("nothing new, as heard").isFalse();
        }
    }

    private static PeerStatus status(MemberState state) {
        return new PeerStatus(state.ordinal(), 0, 0);
    }

    @Test
    void aFixedClusterIsKnownFromTheStart() {
        ClusterMembership membership = ClusterMembership.fixed(Member.named(SELF), Member.named(List.of(SELF, "http://node1:8080")), 16);
        try (ReplicaDirectory directory = new ReplicaDirectory(membership, null, null, null, null, null)) {
            assertThat(directory.placement().size()).isEqualTo(2);
        }
    }
}
