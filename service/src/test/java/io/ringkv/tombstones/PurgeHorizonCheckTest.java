package io.ringkv.tombstones;

import static io.ringkv.support.TestStores.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.ringkv.ledger.RepairLedger;
import io.ringkv.peer.wire.PeerStatus;
import io.ringkv.record.HybridClock;
import io.ringkv.record.Record;
import io.ringkv.ring.ClusterMembership;
import io.ringkv.ring.Member;
import io.ringkv.ring.MemberState;
import io.ringkv.storage.RocksStore;
import io.ringkv.support.TestStores;

/** A store that fell behind its peers' tombstone purges never serves again as it is. */
class PurgeHorizonCheckTest {

    private static final String SELF = "http://a";
    private static final List<String> MEMBERS = List.of(SELF, "http://b", "http://c");
    private static final long LAST_REPAIR_WITH_B = 1_000_000;

    @TempDir
    Path dir;

    private RocksStore store;
    private final AtomicInteger reportedBroken = new AtomicInteger();

    @AfterEach
    void close() {
        if (store != null) {
            store.close();
        }
    }

    @Test
    void aPeerPurgedPastTheStartOfTheLastRepairWithItIsAMissEqualIsNot() {
        assertThat(PurgeHorizonCheck.missedPurges(HybridClock.timestampAt(1000), 1000)).isFalse();
        assertThat(PurgeHorizonCheck.missedPurges(HybridClock.timestampAt(1000) - 1, 1000)).isFalse();
        assertThat(PurgeHorizonCheck.missedPurges(HybridClock.timestampAt(1000) + 1, 1000)).isTrue();
        // Never repaired with it: any purge at all may have dropped a delete this node missed.
        assertThat(PurgeHorizonCheck.missedPurges(1, 0)).isTrue();
    }

    @Test
    void horizonsWithinTheRepairsChangeNothing() {
        ClusterMembership membership = ClusterMembership.fixed(Member.named(SELF), Member.named(MEMBERS), 16);
        PurgeHorizonCheck check = check(membership, memberLedger(), true);
        check.observe("http://b", holding(HybridClock.timestampAt(LAST_REPAIR_WITH_B)));
        check.observe("http://c", holding(0)); // told none (an older peer, or it never purged)
        assertThat(membership.state(SELF)).isEqualTo(MemberState.NORMAL);
        assertThat(check.fellBehind()).isFalse();
        assertThat(reportedBroken).hasValue(0);
    }

    @Test
    void aStoreBehindAPeersPurgesStopsServingAtOnceAndIsClearedAtItsNextStart() {
        ClusterMembership membership = ClusterMembership.fixed(Member.named(SELF), Member.named(MEMBERS), 16);
        PurgeHorizonCheck check = check(membership, memberLedger(), true);

        check.observe("http://b", holding(HybridClock.timestampAt(LAST_REPAIR_WITH_B) + 1));

        assertThat(membership.state(SELF)).as("before the PING is answered").isEqualTo(MemberState.JOINING);
        assertThat(check.fellBehind()).isTrue();
        await().atMost(Duration.ofSeconds(5)).until(() -> reportedBroken.get() == 1);
        check.observe("http://c", holding(Long.MAX_VALUE));
        assertThat(reportedBroken).as("reported once").hasValue(1);

        store.close();
        store = TestStores.open(dir);
        assertThat(new RepairLedger(store).joined()).isFalse();
        assertThat(store.isEmpty()).as("cleared at its next start").isTrue();
    }

    /**
     * Peers PING a node back on its old volume at about the same moment. Whichever answer comes
     * second must not say NORMAL (then that peer reads from it and repairs with it, pulling the
     * deleted values back) because the first is still stopping the store.
     */
    @Test
    void aPingAnsweredWhileAnotherFindsTheStoreBehindNeverSaysNormal() throws Exception {
        RepairLedger ledger = memberLedger();
        ExecutorService pings = Executors.newFixedThreadPool(2);
        try {
            for (int round = 0; round < 200; round++) {
                ClusterMembership membership = ClusterMembership.fixed(Member.named(SELF), Member.named(MEMBERS), 16);
                PurgeHorizonCheck check = check(membership, ledger, true);
                CyclicBarrier together = new CyclicBarrier(2);
                List<Future<MemberState>> answers = Stream.of("http://b", "http://c").map(peer -> pings.submit(() -> {
                    together.await();
                    check.observe(peer, holding(Long.MAX_VALUE));
                    return membership.state(SELF); // what the answer to the peer's PING tells
                })).toList();
                for (Future<MemberState> answer : answers) {
                    assertThat(answer.get()).as("round %d", round).isEqualTo(MemberState.JOINING);
                }
            }
        } finally {
            pings.shutdownNow();
        }
    }

    @Test
    void aPeerNeverRepairedWithThatPurgedIsAMiss() {
        ClusterMembership membership = ClusterMembership.fixed(Member.named(SELF), Member.named(MEMBERS), 16);
        PurgeHorizonCheck check = check(membership, memberLedger(), true);
        check.observe("http://c", holding(1));
        assertThat(check.fellBehind()).isTrue();
    }

    @Test
    void aJoiningNodeIsNotLookedAt() {
        // It pulls what the owners hold now, purges included.
        ClusterMembership membership = ClusterMembership.fixed(Member.named(SELF), Member.named(MEMBERS), 16);
        PurgeHorizonCheck check = check(membership, memberLedger(), true);
        membership.setState(SELF, MemberState.JOINING);
        check.observe("http://c", holding(Long.MAX_VALUE));
        assertThat(check.fellBehind()).isFalse();
    }

    @Test
    void aRepairThePeerRecordedAndThisNodeDidNotHearOfCounts() {
        ClusterMembership membership = ClusterMembership.fixed(Member.named(SELF), Member.named(MEMBERS), 16);
        PurgeHorizonCheck check = check(membership, memberLedger(), true);
        // c repaired with this node at 2,000 s; the news of its end did not arrive here.
        check.observe("http://c", new PeerStatus(MemberState.NORMAL.ordinal(), HybridClock.timestampAt(2_000_000), 2_000_000));
        assertThat(check.fellBehind()).isFalse();
        check.observe("http://c", new PeerStatus(MemberState.NORMAL.ordinal(), HybridClock.timestampAt(2_000_000) + 1, 2_000_000));
        assertThat(check.fellBehind()).isTrue();
    }

    @Test
    void aPeerThatDoesNotSayAgainstWhatItsHorizonIsMeasuredIsNotLookedAt() {
        ClusterMembership membership = ClusterMembership.fixed(Member.named(SELF), Member.named(MEMBERS), 16);
        PurgeHorizonCheck check = check(membership, memberLedger(), true);
        check.observe("http://c", new PeerStatus(MemberState.NORMAL.ordinal(), Long.MAX_VALUE, -1));
        assertThat(check.fellBehind()).isFalse();
    }

    @Test
    void aJoiningPeerIsNotLookedAt() {
        ClusterMembership membership = ClusterMembership.fixed(Member.named(SELF), Member.named(MEMBERS), 16);
        PurgeHorizonCheck check = check(membership, memberLedger(), true);
        check.observe("http://c", new PeerStatus(MemberState.JOINING.ordinal(), Long.MAX_VALUE, 0));
        check.observe("http://c", PeerStatus.UNKNOWN);
        assertThat(check.fellBehind()).isFalse();
    }

    @Test
    void whenEachPurgedWithoutTheOtherNeitherStoreIsCleared() {
        ClusterMembership membership = ClusterMembership.fixed(Member.named(SELF), Member.named(MEMBERS), 16);
        RepairLedger ledger = memberLedgerPurgedBefore(HybridClock.timestampAt(LAST_REPAIR_WITH_B) + 5);
        PurgeHorizonCheck check = check(membership, ledger, true);
        PeerStatus purgedToo = holding(HybridClock.timestampAt(LAST_REPAIR_WITH_B) + 1);
        check.observe("http://b", purgedToo);
        assertThat(check.fellBehind()).isFalse();
        assertThat(membership.state(SELF)).isEqualTo(MemberState.NORMAL);
        assertThat(ledger.joined()).isTrue();
        assertThat(check.stateToHear("http://b", purgedToo, MemberState.NORMAL)).as("nor is the peer's, from here")
                .isEqualTo(MemberState.NORMAL);
    }

    @Test
    void aStaticPeerListIsNotChecked() {
        ClusterMembership membership = ClusterMembership.fixed(Member.named(SELF), Member.named(MEMBERS), 16);
        PurgeHorizonCheck check = check(membership, memberLedger(), false);
        check.observe("http://c", holding(Long.MAX_VALUE));
        assertThat(check.fellBehind()).isFalse();
        assertThat(membership.state(SELF)).isEqualTo(MemberState.NORMAL);
    }

    /**
     * Seen on CI: a node back on its old volume after its peers forgot it answered a peer's PING
     * NORMAL, since that peer was not on its ring yet and its horizon was not looked at; the peer
     * repaired with it and pulled the deleted values back. The peer decides from its side too.
     */
    @Test
    void aPeerBehindThisStoresPurgesIsHeardAsJoiningWhateverItTells() {
        ClusterMembership membership = ClusterMembership.fixed(Member.named(SELF), Member.named(MEMBERS), 16);
        RepairLedger ledger = memberLedgerPurgedBefore(HybridClock.timestampAt(LAST_REPAIR_WITH_B) + 1);
        PurgeHorizonCheck check = check(membership, ledger, true);

        // c never repaired with this node, and this node purged: c may hold values whose deletes it missed.
        PeerStatus fromC = new PeerStatus(MemberState.NORMAL.ordinal(), 0, 0);
        assertThat(check.stateToHear("http://c", fromC, MemberState.NORMAL)).isEqualTo(MemberState.JOINING);
        assertThat(check.stateToHear("http://c", fromC, MemberState.LEAVING)).isEqualTo(MemberState.JOINING);
        assertThat(check.stateToHear("http://c", fromC, MemberState.JOINING)).isEqualTo(MemberState.JOINING);
        // c repaired with this node after its horizon (its record, which this node did not hear of, counts).
        long afterHorizon = LAST_REPAIR_WITH_B + 1;
        assertThat(check.stateToHear("http://c", new PeerStatus(MemberState.NORMAL.ordinal(), 0, afterHorizon), MemberState.NORMAL))
                .isEqualTo(MemberState.NORMAL);
        assertThat(check.fellBehind()).as("this store is not the one behind").isFalse();
    }

    @Test
    void aStaticPeerListOrAJoiningNodeHearsStatesAsTold() {
        RepairLedger ledger = memberLedgerPurgedBefore(Long.MAX_VALUE);
        PurgeHorizonCheck staticList = check(ClusterMembership.fixed(Member.named(SELF), Member.named(MEMBERS), 16), ledger, false);
        assertThat(staticList.stateToHear("http://c", holding(0), MemberState.NORMAL)).isEqualTo(MemberState.NORMAL);

        ClusterMembership joining = ClusterMembership.fixed(Member.named(SELF), Member.named(MEMBERS), 16);
        joining.setState(SELF, MemberState.JOINING);
        PurgeHorizonCheck check = check(joining, ledger, true);
        assertThat(check.stateToHear("http://c", holding(0), MemberState.NORMAL)).isEqualTo(MemberState.NORMAL);
        assertThat(check.stateToHear("http://c", new PeerStatus(MemberState.NORMAL.ordinal(), 0, -1), MemberState.NORMAL))
                .as("an older peer").isEqualTo(MemberState.NORMAL);
    }

    /**
     * Both sides decide from the same inputs: a peer that this node hears as JOINING is one that
     * stops serving once it hears this node's horizon, and one it hears as told does not.
     */
    @Test
    void thisNodesDecisionAboutAPeerIsThePeersOwnAboutItself() {
        long[] peerRepairs = {0, LAST_REPAIR_WITH_B - 1, LAST_REPAIR_WITH_B, LAST_REPAIR_WITH_B + 1};
        long[] horizons = {0, HybridClock.timestampAt(LAST_REPAIR_WITH_B) - 1, HybridClock.timestampAt(LAST_REPAIR_WITH_B),
                HybridClock.timestampAt(LAST_REPAIR_WITH_B) + 1};
        RepairLedger ours = memberLedger();
        int peers = 0;
        for (long horizon : horizons) {
            ours.purgedBefore(horizon);
            PurgeHorizonCheck here = check(ClusterMembership.fixed(Member.named(SELF), Member.named(MEMBERS), 16), ours, true);
            for (long peerRepair : peerRepairs) {
                // The peer c: a member's store whose only record is its last repair with this node (0: none).
                try (RocksStore peerStore = TestStores.open(dir.resolve("peer-" + peers++))) {
                    RepairLedger theirs = new RepairLedger(peerStore);
                    theirs.markJoined();
                    if (peerRepair > 0) {
                        theirs.repaired(SELF, peerRepair);
                    }
                    PurgeHorizonCheck there = new PurgeHorizonCheck(ClusterMembership.fixed(Member.named("http://c"), Member.named(MEMBERS), 16), theirs, true,
                            () -> {
                            });

                    MemberState heardHere = here.stateToHear("http://c", theirs.statusFor(SELF, MemberState.NORMAL),
                            MemberState.NORMAL);
                    there.observe(SELF, ours.statusFor("http://c", MemberState.NORMAL));

                    assertThat(heardHere == MemberState.JOINING).as("horizon %d, the peer's last repair %d", horizon, peerRepair)
                            .isEqualTo(there.fellBehind());
                }
            }
        }
        assertThat(peers).isEqualTo(16);
    }

    /** What a peer that holds data (NORMAL) and has forgotten its repairs with this node (or never had one) tells. */
    private static PeerStatus holding(long purgedBefore) {
        return new PeerStatus(MemberState.NORMAL.ordinal(), purgedBefore, 0);
    }

    /** A member's store, with data, whose last repair with b started at {@link #LAST_REPAIR_WITH_B} and which never repaired with c. */
    private RepairLedger memberLedger() {
        store = TestStores.open(dir);
        RepairLedger ledger = new RepairLedger(store);
        ledger.markJoined();
        store.apply(bytes("k"), Record.value(1, bytes("v"))).join();
        ledger.repaired("http://b", LAST_REPAIR_WITH_B);
        return ledger;
    }

    /** {@link #memberLedger()}, which has purged tombstones below {@code horizon}. */
    private RepairLedger memberLedgerPurgedBefore(long horizon) {
        RepairLedger ledger = memberLedger();
        ledger.purgedBefore(horizon);
        return ledger;
    }

    private PurgeHorizonCheck check(ClusterMembership membership, RepairLedger ledger, boolean enabled) {
        return new PurgeHorizonCheck(membership, ledger, enabled, reportedBroken::incrementAndGet);
    }
}
