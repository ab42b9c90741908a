package io.ringkv.replication;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.ringkv.antientropy.RepairLedger;
import io.ringkv.overload.Throttle;
import io.ringkv.ring.ClusterMembership;
import io.ringkv.storage.RocksStore;
import io.ringkv.support.TestStores;

/** What the replica side takes from a peer: a repair time within the clock's offset, members by the ring. */
class ReplicaServiceTrustTest {

    private static final long NOW = 1_800_000_000_000L;

    @TempDir
    Path dir;

    @Test
    void aRepairReportedFromTheFutureIsRefusedAndMembersAreTheRingsNames() {
        try (RocksStore store = TestStores.open(dir)) {
            RepairLedger ledger = new RepairLedger(store);
            var membership = ClusterMembership.fixed("http://a:1", List.of("http://a:1", "http://b:1"), 8);
            var service = new ReplicaService("http://a:1", store, new HybridClock(() -> NOW, 500), membership, ledger,
                    Throttle.of(1024));

            assertThat(service.repaired("http://b:1", NOW + 60_000)).isFalse();
            assertThat(service.repaired("http://b:1", Long.MAX_VALUE)).isFalse();
            assertThat(ledger.lastRepairMillis("http://b:1")).as("nothing recorded").isZero();
            assertThat(service.repaired("http://b:1", NOW + 400)).isTrue();
            assertThat(ledger.lastRepairMillis("http://b:1")).isEqualTo(NOW + 400);

            assertThat(service.isMember("http://b:1")).isTrue();
            assertThat(service.isMember("http://c:1")).isFalse();
        }
    }
}
