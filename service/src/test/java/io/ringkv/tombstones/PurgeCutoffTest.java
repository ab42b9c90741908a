package io.ringkv.tombstones;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.ringkv.ledger.RepairLedger;
import io.ringkv.record.HybridClock;
import io.ringkv.ring.ClusterMembership;
import io.ringkv.ring.Member;
import io.ringkv.ring.MemberState;
import io.ringkv.storage.RocksStore;
import io.ringkv.support.TestStores;

/** Up to where a node may purge tombstones: who it must have repaired with, and who it still waits for. */
class PurgeCutoffTest {

    private static final String A = "http://a";
    private static final String B = "http://b";
    private static final String C = "http://c";

    @TempDir
    Path dir;

    private RocksStore store;
    private RepairLedger ledger;
    private final AtomicLong now = new AtomicLong(50_000);

    @BeforeEach
    void open() {
        store = TestStores.open(dir);
        ledger = new RepairLedger(store);
        ledger.repaired(B, 3_000);
        ledger.repaired(C, 2_000);
    }

    @AfterEach
    void close() {
        store.close();
    }

    @Test
    void olderThanTheGracePeriodAndTheLastRepairWithEveryMember() {
        PurgeHorizon horizon = horizon(ClusterMembership.fixed(Member.named(A), Member.named(List.of(A, B, C)), 16));
        assertThat(horizon.cutoff(1_000)).isEqualTo(HybridClock.timestampAt(1_000));
        assertThat(horizon.cutoff(45_000)).isEqualTo(HybridClock.timestampAt(2_000));
        assertThat(ledger.purgedBefore()).as("the horizon its peers check").isEqualTo(HybridClock.timestampAt(2_000));
    }

    @Test
    void aMemberThatSharesNoRangeHoldsPurgesBackToo() {
        // One copy of each key: no two members share a range, but the horizon peers check must
        // still not pass any member's last repair.
        // (The horizon takes no replication factor: it waits for every member whatever they share.)
        ClusterMembership membership = ClusterMembership.fixed(Member.named(A), Member.named(List.of(A, B, C)), 16);
        PurgeHorizon horizon = new PurgeHorizon(membership, ledger, now::get);
        assertThat(horizon.cutoff(45_000)).isEqualTo(HybridClock.timestampAt(2_000));
    }

    @Test
    void aJoiningMemberHoldsPurgesBackLikeAnyOther() {
        // In a new cluster members turn NORMAL one by one, pulling nothing: a node that purged
        // while C was still JOINING would be past the start of C's first repair with it.
        ClusterMembership membership = ClusterMembership.fixed(Member.named(A), Member.named(List.of(A, B, C)), 16);
        membership.setState(C, MemberState.JOINING);
        assertThat(horizon(membership).cutoff(45_000)).isEqualTo(HybridClock.timestampAt(2_000));
    }

    @Test
    void aPeerOffTheRingWithoutHandingOverHoldsPurgesBackForAGracePeriodThenIsForgotten() {
        ClusterMembership membership = ClusterMembership.fixed(Member.named(A), Member.named(List.of(A, B, C)), 16);
        PurgeHorizon horizon = horizon(membership);
        membership.update(Member.named(Set.of(A, B))); // C gone from DNS, at 50 s

        assertThat(horizon.cutoff(45_000)).as("C went 5 s ago").isEqualTo(HybridClock.timestampAt(2_000));
        assertThat(horizon.cutoff(50_000 - 1)).isEqualTo(HybridClock.timestampAt(2_000));
        now.set(70_000);
        assertThat(horizon.cutoff(55_000)).as("C went longer than the grace period ago").isEqualTo(HybridClock.timestampAt(3_000));
        assertThat(ledger.lastRepairs()).containsOnlyKeys(B);
    }

    @Test
    void aPeerThatHandedItsDataOverIsForgottenAtOnce() {
        ClusterMembership membership = ClusterMembership.fixed(Member.named(A), Member.named(List.of(A, B, C)), 16);
        PurgeHorizon horizon = horizon(membership);
        membership.setState(C, MemberState.LEAVING);
        membership.update(Member.named(Set.of(A, B)));

        assertThat(horizon.cutoff(45_000)).isEqualTo(HybridClock.timestampAt(3_000));
        assertThat(ledger.lastRepairs()).containsOnlyKeys(B);
    }

    @Test
    void aPeerThatComesBackIsNoLongerAbsent() {
        ClusterMembership membership = ClusterMembership.fixed(Member.named(A), Member.named(List.of(A, B, C)), 16);
        PurgeHorizon horizon = horizon(membership);
        membership.update(Member.named(Set.of(A, B)));
        membership.update(Member.named(Set.of(A, B, C)));
        now.set(70_000);
        membership.update(Member.named(Set.of(A, B))); // gone again, at 70 s: its absence counts from then
        assertThat(horizon.cutoff(55_000)).isEqualTo(HybridClock.timestampAt(2_000));
        assertThat(ledger.lastRepairs()).containsKeys(B, C);
    }

    @Test
    void aPeerOffTheRingSinceThisNodeStartedCountsFromTheStart() {
        // Restarted while C was away: its ledger still has C, its ring never had it.
        ClusterMembership membership = ClusterMembership.fixed(Member.named(A), Member.named(List.of(A, B)), 16);
        PurgeHorizon horizon = horizon(membership);
        assertThat(horizon.cutoff(45_000)).isEqualTo(HybridClock.timestampAt(2_000));
    }

    @Test
    void nothingIsPurgedBeforeTheRingIsKnownNorWhileJoining() {
        ClusterMembership discovering = ClusterMembership.discovered(Member.named(A), 16);
        assertThat(horizon(discovering).cutoff(45_000)).as("its ring is itself alone").isZero();

        ClusterMembership joining = ClusterMembership.fixed(Member.named(A), Member.named(List.of(A, B, C)), 16);
        joining.setState(A, MemberState.JOINING);
        assertThat(horizon(joining).cutoff(45_000)).isZero();
        assertThat(ledger.purgedBefore()).isZero();
    }

    private PurgeHorizon horizon(ClusterMembership membership) {
        return new PurgeHorizon(membership, ledger, now::get);
    }
}
