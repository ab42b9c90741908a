package io.ringkv.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.ringkv.ledger.RepairLedger;
import io.ringkv.overload.Throttle;
import io.ringkv.peer.wire.PeerStatus;
import io.ringkv.paxos.Acceptor;
import io.ringkv.record.HybridClock;
import io.ringkv.record.Record;
import io.ringkv.ring.ClusterMembership;
import io.ringkv.ring.Member;
import io.ringkv.ring.MemberState;
import io.ringkv.ring.TokenIntervalSet;
import io.ringkv.storage.RocksStore;
import io.ringkv.storage.StorageException;
import io.ringkv.support.TestStores;
import io.ringkv.tombstones.PurgeHorizonCheck;

/**
 * What the replica side takes from a peer (a repair time within the clock's offset, members by
 * the ring), and what it hands out: nothing from a store withheld (one behind its peers' purges).
 */
class ReplicaServiceTrustTest {

    private static final long NOW = 1_800_000_000_000L;

    @TempDir
    Path dir;

    @Test
    void aRepairReportedFromTheFutureIsRefusedAndMembersAreTheRingsNames() {
        try (RocksStore store = TestStores.open(dir)) {
            RepairLedger ledger = new RepairLedger(store);
            var membership = ClusterMembership.fixed(Member.named("http://a:1"), Member.named(List.of("http://a:1", "http://b:1")), 8);
            var service = service(store, membership, ledger, new PurgeHorizonCheck(membership, ledger, false, () -> { }));

            assertThat(service.repaired("http://b:1", NOW + 60_000)).isFalse();
            assertThat(service.repaired("http://b:1", Long.MAX_VALUE)).isFalse();
            assertThat(ledger.lastRepairMillis("http://b:1")).as("nothing recorded").isZero();
            assertThat(service.repaired("http://b:1", NOW + 400)).isTrue();
            assertThat(ledger.lastRepairMillis("http://b:1")).isEqualTo(NOW + 400);

            assertThat(service.isMember("http://b:1")).isTrue();
            assertThat(service.isMember("http://c:1")).isFalse();
        }
    }

    @Test
    void aWithheldStoreHandsNothingOut() {
        try (RocksStore store = TestStores.open(dir)) {
            var membership = ClusterMembership.fixed(Member.named("http://a:1"), Member.named(List.of("http://a:1", "http://b:1")), 8);
            RepairLedger ledger = new RepairLedger(store);
            var check = new PurgeHorizonCheck(membership, ledger, true, () -> { });
            var service = service(store, membership, ledger, check);
            byte[] key = TestStores.bytes("deleted-elsewhere");
            store.apply(key, Record.value(NOW, TestStores.bytes("stale"))).join();
            assertThat(service.read(key)).as("served until found behind").isPresent();

            // b's PING tells it purged tombstones past the start of their last repair (never): this store is behind.
            service.status("http://b:1", new PeerStatus(MemberState.NORMAL.ordinal(), HybridClock.timestampAt(NOW), 0));
            assertThat(check.fellBehind()).as("the PING's status reached the check").isTrue();

            assertThatThrownBy(() -> service.read(key)).isInstanceOf(StorageException.class);
            assertThat(service.readIfCached(key).known()).as("sent to read, which fails").isFalse();
            assertThatThrownBy(() -> service.digest(new long[] {Long.MIN_VALUE, Long.MAX_VALUE})).isInstanceOf(StorageException.class);
            assertThatThrownBy(() -> service.openTokenRange(Long.MIN_VALUE, Long.MAX_VALUE)).isInstanceOf(StorageException.class);
            assertThatThrownBy(() -> service.openRange(key, null)).isInstanceOf(StorageException.class);
            assertThatThrownBy(() -> service.openTokenIntervals(TokenIntervalSet.of(new long[] {Long.MIN_VALUE, Long.MAX_VALUE})))
                    .isInstanceOf(StorageException.class);

        }
    }

    private static ReplicaService service(RocksStore store, ClusterMembership membership, RepairLedger ledger, PurgeHorizonCheck check) {
        return new ReplicaService("http://a:1", store, new HybridClock(() -> NOW, 500), membership, ledger, Throttle.of(1024),
                check, Snapshots.NOT_CONFIGURED, new PeerEvents(), new Acceptor(store, 1 << 20));
    }
}
