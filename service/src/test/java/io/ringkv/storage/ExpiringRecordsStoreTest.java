package io.ringkv.storage;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.function.Predicate;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.RocksDBException;

import io.ringkv.record.HybridClock;
import io.ringkv.record.KeyedRecord;
import io.ringkv.record.Record;
import io.ringkv.support.TestStores;

/**
 * Records that expire, in the store: kept in a family of their own, a key in one family at a
 * time, read and scanned with the others, their expired values turned into tombstones by
 * compaction and purged through the tombstone index once expired.
 */
class ExpiringRecordsStoreTest {

    private static final long HOUR = 3_600_000;

    @TempDir
    Path dir;

    private RocksStore store;

    @AfterEach
    void close() {
        if (store != null) {
            store.close();
        }
    }

    private boolean apply(String key, Record record) {
        return store.apply(b(key), record).join();
    }

    private static byte[] b(String text) {
        return TestStores.bytes(text);
    }

    /** Which families hold the key: "records", "expiring", both or none. */
    private List<String> familiesHolding(String key) throws RocksDBException {
        List<String> holding = new ArrayList<>();
        if (store.db().get(store.families().records(), b(key)) != null) {
            holding.add("records");
        }
        if (store.db().get(store.families().expiring(), b(key)) != null) {
            holding.add("expiring");
        }
        return holding;
    }

    @Test
    void aKeyMovesBetweenTheFamiliesAndIsInOneAtATime() throws Exception {
        store = TestStores.open(dir);
        long later = System.currentTimeMillis() + HOUR;
        Record session = Record.expiring(10, b("a"), later);
        assertThat(apply("k", session)).isTrue();
        assertThat(store.get(b("k"))).contains(session);
        assertThat(store.get(b("k")).orElseThrow().expiresAt()).isEqualTo(later);
        assertThat(store.getIfCached(b("k")).found()).contains(session);
        assertThat(familiesHolding("k")).containsExactly("expiring");

        assertThat(apply("k", Record.value(11, b("b")))).as("made permanent").isTrue();
        assertThat(store.get(b("k"))).contains(Record.value(11, b("b")));
        assertThat(familiesHolding("k")).containsExactly("records");

        assertThat(apply("k", Record.expiring(9, b("old"), later))).as("an older expiring write").isFalse();
        assertThat(apply("k", Record.expiring(12, b("c"), later))).isTrue();
        assertThat(familiesHolding("k")).containsExactly("expiring");
        assertThat(apply("k", Record.tombstone(13))).isTrue();
        assertThat(familiesHolding("k")).containsExactly("records");
        assertThat(store.get(b("k"))).contains(Record.tombstone(13));
    }

    @Test
    void rangesWalkBothFamiliesInKeyOrder() {
        store = TestStores.open(dir);
        long later = System.currentTimeMillis() + HOUR;
        apply("a", Record.value(1, b("A")));
        apply("b", Record.expiring(2, b("B"), later));
        apply("c", Record.value(3, b("C")));
        apply("d", Record.expiring(4, b("D"), 1));
        apply("e", Record.tombstone(5));
        apply("f", Record.expiring(6, b("F"), later));

        assertThat(walk(b(""), null, null)).containsExactly(
                "a=" + Record.value(1, b("A")), "b=" + Record.expiring(2, b("B"), later), "c=" + Record.value(3, b("C")),
                "d=" + Record.expiring(4, b("D"), 1), "e=" + Record.tombstone(5), "f=" + Record.expiring(6, b("F"), later));
        assertThat(walk(b("b"), b("f"), key -> !new String(key, StandardCharsets.UTF_8).equals("c")))
                .extracting(entry -> entry.substring(0, 1)).containsExactly("b", "d", "e");
        assertThat(walk(b("c"), null, key -> key[0] != 'f')).extracting(entry -> entry.substring(0, 1)).containsExactly("c", "d", "e");
    }

    private List<String> walk(byte[] start, byte[] end, Predicate<byte[]> keys) {
        List<String> seen = new ArrayList<>();
        try (RangeCursor cursor = store.openRange(start, end, keys)) {
            for (KeyedRecord next = cursor.next(); next != null; next = cursor.next()) {
                seen.add(new String(next.key(), StandardCharsets.UTF_8) + "=" + next.record());
            }
        }
        return seen;
    }

    @Test
    void compactionLeavesAnExpiredValuesTombstoneAndThePurgeTakesItOnceExpired() {
        store = TestStores.open(dir);
        long now = System.currentTimeMillis();
        long written = HybridClock.timestampAt(now - 10_000);
        Record expired = Record.expiring(written, b("gone"), now - 1_000);
        Record live = Record.expiring(written, b("here"), now + HOUR);
        apply("expired", expired);
        apply("live", live);
        apply("replaced", Record.expiring(written, b("x"), now - 1_000));
        apply("replaced", Record.value(written + 1, b("kept")));

        assertThat(store.get(b("expired"))).as("before compaction").contains(expired);
        store.compact();
        assertThat(store.get(b("expired"))).as("compacted: its tombstone").contains(Record.tombstone(written));
        assertThat(store.get(b("live"))).contains(live);

        TombstoneIndex index = new TombstoneIndex(store);
        assertThat(index.purgeTombstonesBefore(HybridClock.timestampAt(now - 2_000)).total()).as("before its expiry").isZero();
        assertThat(store.get(b("expired"))).isPresent();
        assertThat(index.purgeTombstonesBefore(HybridClock.timestampAt(now)).expired()).as("past its expiry, counted as a value that expired").isEqualTo(1);
        assertThat(store.get(b("expired"))).isEmpty();
        assertThat(store.get(b("live"))).contains(live);
        assertThat(store.get(b("replaced"))).contains(Record.value(written + 1, b("kept")));
        assertThat(store.isEmpty()).isFalse();
    }

    @Test
    void thePurgeTakesAnExpiredValueCompactionHasNotReachedYet() {
        store = TestStores.open(dir);
        long now = System.currentTimeMillis();
        apply("expired", Record.expiring(5, b("gone"), now - 1_000));
        assertThat(new TombstoneIndex(store).purgeTombstonesBefore(HybridClock.timestampAt(now)).expired()).isEqualTo(1);
        assertThat(store.get(b("expired"))).isEmpty();
        assertThat(store.isEmpty()).isTrue();
    }

    @Test
    void aCheckpointHoldsBothFamiliesInKeyOrder() {
        store = TestStores.open(dir.resolve("store"));
        long later = System.currentTimeMillis() + HOUR;
        apply("a", Record.expiring(1, b("A"), later));
        apply("b", Record.value(2, b("B")));
        apply("c", Record.expiring(3, b("C"), later));
        store.checkpoint(dir.resolve("checkpoint"));
        List<String> seen = new ArrayList<>();
        try (CheckpointReader reader = CheckpointReader.open(dir.resolve("checkpoint"))) {
            for (Iterator<KeyedRecord> records = reader.records(); records.hasNext();) {
                KeyedRecord next = records.next();
                seen.add(new String(next.key(), StandardCharsets.UTF_8) + "=" + next.record());
            }
            assertThat(reader.contents().records()).isEqualTo(3);
        }
        assertThat(seen).containsExactly("a=" + Record.expiring(1, b("A"), later), "b=" + Record.value(2, b("B")),
                "c=" + Record.expiring(3, b("C"), later));
    }
}
