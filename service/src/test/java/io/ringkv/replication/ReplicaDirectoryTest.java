package io.ringkv.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.ringkv.ledger.RepairLedger;
import io.ringkv.peer.wire.PeerStatus;
import io.ringkv.record.HybridClock;
import io.ringkv.ring.ClusterMembership;
import io.ringkv.ring.Member;
import io.ringkv.ring.MemberState;
import io.ringkv.ring.RingNotKnownException;
import io.ringkv.storage.RocksStore;
import io.ringkv.support.TestStores;
import io.ringkv.tombstones.PurgeHorizonCheck;

/**
 * A node whose discovery has not found its members yet places no key: its ring is itself alone,
 * and a read from it could hand back values its peers deleted (seen on CI: a node back on an old
 * volume answered 200 for a purged key in the second before its first discovery round ended).
 */
class ReplicaDirectoryTest {

    private static final String SELF = "http://node3:8080";
    private static final String NODE_1 = "http://node1:8080";
    private static final String NODE_2 = "http://node2:8080";

    @TempDir
    Path dir;
    private RocksStore store;

    @Test
    void placesNoKeyUntilDiscoveryHasFoundTheMembers() {
        ClusterMembership membership = ClusterMembership.discovered(Member.named(SELF), 16);
        // Found behind its peers' purges by a peer's PING before its own first round: JOINING, ring of itself.
        membership.setState(SELF, MemberState.JOINING);
        try (ReplicaDirectory directory = directory(membership)) {
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
        try (ReplicaDirectory directory = directory(membership)) {
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
        try (ReplicaDirectory directory = directory(membership)) {
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
        try (ReplicaDirectory directory = directory(membership, nodeTwoBehind(membership))) {
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
        try (ReplicaDirectory directory = directory(membership)) {
            assertThat(directory.differsFromKnown(NODE_2, status(MemberState.NORMAL))).isFalse();
            assertThat(directory.differsFromKnown(NODE_2, status(MemberState.LEFT))).isTrue();
            assertThat(directory.differsFromKnown(NODE_2, PeerStatus.UNKNOWN)).as("no state told").isFalse();

        }
        // A store behind this node's purges says NORMAL; this node hears it as JOINING already.
        try (ReplicaDirectory directory = directory(membership, nodeTwoBehind(membership))) {
            membership.setState(NODE_2, MemberState.JOINING);
            assertThat(directory.differsFromKnown(NODE_2, status(MemberState.NORMAL))).as("nothing new, as heard").isFalse();
        }
    }

    /** What peers tell in their own pings reaches the directory through the events the replica service publishes. */
    @Test
    void aPingsStatusPublishedByTheServiceIsHeard() {
        ClusterMembership fixed = ClusterMembership.fixed(Member.named(SELF), Member.named(List.of(SELF, NODE_1, NODE_2)), 16);
        PeerEvents events = new PeerEvents();
        try (ReplicaDirectory directory = new ReplicaDirectory(fixed, null, null, null, null, null, unchecked(fixed), events, false)) {
            events.publish(new PeerEvents.StatusInPing(NODE_2, status(MemberState.JOINING)));
            assertThat(fixed.state(NODE_2)).as("with a static list, a ping's state is heard at once").isEqualTo(MemberState.JOINING);
        }
    }

    private static ReplicaDirectory directory(ClusterMembership membership) {
        return directory(membership, unchecked(membership));
    }

    private static ReplicaDirectory directory(ClusterMembership membership, PurgeHorizonCheck check) {
        return new ReplicaDirectory(membership, null, null, null, null, null, check, new PeerEvents(), false);
    }

    /** The check as with a static peer list: it hears every state as told. */
    private static PurgeHorizonCheck unchecked(ClusterMembership membership) {
        return new PurgeHorizonCheck(membership, null, false, () -> { });
    }

    /**
     * The check on a store that purged tombstones below its second 1,000 (ms), with DNS discovery:
     * NODE_1 was repaired with it since, NODE_2 never was, so NODE_2's store is behind its purges.
     */
    private PurgeHorizonCheck nodeTwoBehind(ClusterMembership membership) {
        store = TestStores.open(dir);
        RepairLedger ledger = new RepairLedger(store);
        ledger.purgedBefore(HybridClock.timestampAt(1_000));
        ledger.repaired(NODE_1, 1_000);
        return new PurgeHorizonCheck(membership, ledger, true, () -> { });
    }

    @AfterEach
    void closeStore() {
        if (store != null) {
            store.close();
        }
    }

    private static PeerStatus status(MemberState state) {
        return new PeerStatus(state.ordinal(), 0, 0);
    }

    @Test
    void aFixedClusterIsKnownFromTheStart() {
        ClusterMembership membership = ClusterMembership.fixed(Member.named(SELF), Member.named(List.of(SELF, "http://node1:8080")), 16);
        try (ReplicaDirectory directory = directory(membership)) {
            assertThat(directory.placement().size()).isEqualTo(2);
        }
    }
}
