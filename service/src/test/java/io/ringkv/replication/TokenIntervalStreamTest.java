package io.ringkv.replication;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.ringkv.ledger.RepairLedger;
import io.ringkv.overload.Throttle;
import io.ringkv.paxos.Acceptor;
import io.ringkv.record.HybridClock;
import io.ringkv.record.KeyedRecord;
import io.ringkv.record.Record;
import io.ringkv.ring.ClusterMembership;
import io.ringkv.ring.HashRing;
import io.ringkv.ring.Member;
import io.ringkv.ring.TokenIntervalSet;
import io.ringkv.storage.RecordCursor;
import io.ringkv.storage.RocksStore;
import io.ringkv.storage.TokenIndex;
import io.ringkv.support.TestStores;
import io.ringkv.tombstones.PurgeHorizonCheck;

/**
 * What a peer that pulls token intervals whole is sent ({@link ReplicaService#openTokenIntervals}):
 * every record of the keys in them, tombstones included, and nothing else, whether the store
 * reads everything in one scan (a large share of its keys) or the index's keys by key (a few).
 */
class TokenIntervalStreamTest {

    private static final long NOW = 1_800_000_000_000L;
    private static final int KEYS = 2000;

    @TempDir
    Path dir;

    @Test
    void aLargeShareAndASmallOneAreStreamedExactly() {
        try (RocksStore store = TestStores.open(dir)) {
            var membership = ClusterMembership.fixed(Member.named("http://a:1"), Member.named(List.of("http://a:1", "http://b:1")), 8);
            var service = new ReplicaService("http://a:1", store, new HybridClock(() -> NOW, 500), membership,
                    new RepairLedger(store), Throttle.of(1024), new PurgeHorizonCheck(membership, null, false, () -> { }),
                    Snapshots.NOT_CONFIGURED, new PeerEvents(), new Acceptor(store, 1 << 20));
            Map<String, Record> stored = new HashMap<>();
            for (int i = 0; i < KEYS; i++) {
                Record record = i % 5 == 0 ? Record.tombstone(NOW + i) : Record.value(NOW + i, ("v" + i).getBytes(StandardCharsets.UTF_8));
                store.apply(TestStores.bytes("k" + i), record).join();
                stored.put("k" + i, record);
            }
            // Flushed, so that RocksDB's estimate of the keys (which picks the way) counts them.
            store.compact();

            // Half the ring, in two pieces: more than an eighth of the keys, read in one scan.
            long[] half = {Long.MIN_VALUE, Long.MIN_VALUE / 2, 0, Long.MAX_VALUE / 2};
            assertThat(streamed(service, half)).isEqualTo(expected(stored, half)).hasSizeGreaterThan(KEYS / 3);
            // A sliver of the ring: about 1 % of the keys, read key by key from the token index.
            long[] sliver = {Long.MAX_VALUE - Long.MAX_VALUE / 50, Long.MAX_VALUE};
            assertThat(new TokenIndex(store).holdsAtLeast(sliver, KEYS / ReplicaService.SCAN_ALL_SHARE)).isFalse();
            assertThat(streamed(service, sliver)).isEqualTo(expected(stored, sliver)).isNotEmpty();
        }
    }

    @Test
    void theIndexWayAndTheScanWayAgree() {
        try (RocksStore store = TestStores.open(dir)) {
            for (int i = 0; i < 500; i++) {
                store.apply(TestStores.bytes("k" + i), i % 3 == 0 ? Record.tombstone(NOW + i) : Record.value(NOW + i, new byte[10])).join();
            }
            long[] intervals = {-Long.MAX_VALUE / 3, Long.MAX_VALUE / 3};
            TokenIntervalSet wanted = TokenIntervalSet.of(intervals);
            Map<String, Record> byIndex = drain(new TokenIndex(store).openRecords(intervals));
            Map<String, Record> byScan = drain(store.openRange(new byte[0], null, key -> wanted.contains(HashRing.token(key))));
            // A third of the ring: about a third of the keys.
            assertThat(byIndex).isEqualTo(byScan).hasSizeBetween(120, 220);
        }
    }

    private static Map<String, Record> streamed(ReplicaService service, long[] intervals) {
        return drain(service.openTokenIntervals(TokenIntervalSet.of(intervals)));
    }

    private static Map<String, Record> drain(RecordCursor cursor) {
        Map<String, Record> got = new HashMap<>();
        try (cursor) {
            for (KeyedRecord next = cursor.next(); next != null; next = cursor.next()) {
                Record previous = got.put(new String(next.key(), StandardCharsets.UTF_8), next.record());
                assertThat(previous).as("each key once").isNull();
            }
        }
        return got;
    }

    private static Map<String, Record> expected(Map<String, Record> stored, long[] intervals) {
        TokenIntervalSet wanted = TokenIntervalSet.of(intervals);
        Map<String, Record> inside = new HashMap<>();
        stored.forEach((key, record) -> {
            if (wanted.contains(HashRing.token(key.getBytes(StandardCharsets.UTF_8)))) {
                inside.put(key, record);
            }
        });
        return inside;
    }
}
