package io.ringkv.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.DBOptions;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.TtlDB;

import io.ringkv.record.KeyedRecord;
import io.ringkv.record.LastWriteWins;
import io.ringkv.record.Record;
import io.ringkv.ring.HashRing;
import io.ringkv.support.TestStores;

class RocksStoreTest {

    @TempDir
    Path dir;

    private RocksStore store;

    private RocksStore open() {
        store = TestStores.open(dir);
        return store;
    }

    /** Applies through the writer and waits: whether the record was written. */
    /** More than one batch of removals: the purge queues them a thousand at a time, and counts each. */
    @Test
    void aPurgeOfManyGoesBatchByBatchAndCountsEveryOne() {
        open();
        for (int i = 0; i < 2_500; i++) {
            apply("deleted-" + i, Record.tombstone(100 + i));
            apply("expired-" + i, Record.expiring(100 + i, b("v"), 1_000 + i));
        }
        TombstoneIndex.Purged purged = new TombstoneIndex(store).purgeTombstonesBefore(Long.MAX_VALUE);
        assertThat(purged.tombstones()).isEqualTo(2_500);
        assertThat(purged.expired()).isEqualTo(2_500);
        assertThat(store.isEmpty()).isTrue();
    }

    /** A store no longer written to flushes its memtables (so compaction can reach what they hold); one being written to does not. */
    @Test
    void aStoreFlushesOnlyOnceNoRecordWasWrittenSinceItLastLooked() throws Exception {
        open();
        apply("a", Record.value(1, b("v")));
        apply("b", Record.expiring(2, b("v"), 1_000));
        assertThat(store.flushIfQuiet()).as("the first look only counts").isFalse();
        apply("c", Record.value(3, b("v")));
        assertThat(store.flushIfQuiet()).as("written since").isFalse();
        assertThat(store.flushIfQuiet()).as("quiet").isTrue();
        assertThat(store.longProperty("rocksdb.num-entries-active-mem-table")).isZero();
        assertThat(store.longProperty("rocksdb.total-sst-files-size")).as("flushed to files").isPositive();
        assertThat(store.flushIfQuiet()).as("nothing left in memory").isFalse();
        assertThat(store.get(b("c"))).contains(Record.value(3, b("v")));
    }

    private boolean apply(String key, Record record) {
        return apply(b(key), record);
    }

    private boolean apply(byte[] key, Record record) {
        return store.apply(key, record).join();
    }

    @AfterEach
    void close() {
        if (store != null) {
            store.close();
        }
    }

    private static byte[] b(String text) {
        return TestStores.bytes(text);
    }

    @Test
    void keepsOnlyTheNewestVersion() {
        open();
        assertThat(apply("k", Record.value(10, b("ten")))).isTrue();
        assertThat(apply(b("k"), Record.value(5, b("five")))).as("an older write is ignored").isFalse();
        assertThat(store.get(b("k"))).contains(Record.value(10, b("ten")));
        assertThat(apply(b("k"), Record.tombstone(11))).isTrue();
        assertThat(store.get(b("k"))).contains(Record.tombstone(11));
        assertThat(apply(b("k"), Record.value(10, b("ten")))).as("a delete is not undone by an older write").isFalse();
        assertThat(apply(b("k"), Record.value(12, b("again")))).isTrue();
        assertThat(store.get(b("k"))).contains(Record.value(12, b("again")));
        assertThat(store.get(b("absent"))).isEmpty();
    }

    @Test
    void aTieOfTimestampsIsBrokenTheSameWayOnEveryReplica() {
        open();
        assertThat(apply("k", Record.value(20, b("b")))).isTrue();
        // Stored first or second, the greater value stays: the stored value is read when the versions tie.
        assertThat(apply(b("k"), Record.value(20, b("a")))).as("a smaller value of the same time").isFalse();
        assertThat(apply(b("k"), Record.value(20, b("b")))).as("the same version again").isFalse();
        assertThat(apply(b("k"), Record.value(20, b("c")))).as("a greater value of the same time").isTrue();
        assertThat(store.get(b("k"))).contains(Record.value(20, b("c")));
        assertThat(apply(b("k"), Record.tombstone(20))).as("a delete of the same time beats any value").isTrue();
        assertThat(apply(b("k"), Record.value(20, b("z")))).isFalse();
        assertThat(store.get(b("k"))).contains(Record.tombstone(20));
    }

    @Test
    void scansLiveRecordsAndTombstonesInUnsignedKeyOrder() {
        open();
        apply(b("b"), Record.value(1, b("B")));
        apply(b("a"), Record.tombstone(2));
        apply(new byte[] {(byte) 0xC3, (byte) 0xA9}, Record.value(3, b("e-acute")));
        apply(b("c"), Record.value(4, b("C")));
        apply(b("d"), Record.tombstone(5));

        assertThat(keys(null, null)).containsExactly("a", "b", "c", "d", "\u00e9");
        assertThat(keys("b", "d")).containsExactly("b", "c");
        assertThat(keys("bb", "bc")).isEmpty();
        assertThat(keys("c", null)).containsExactly("c", "d", "\u00e9");
    }

    private List<String> keys(String start, String end) {
        List<String> keys = new ArrayList<>();
        try (RangeCursor cursor = store.openRange(start == null ? new byte[0] : b(start), end == null ? null : b(end))) {
            for (KeyedRecord next = cursor.next(); next != null; next = cursor.next()) {
                keys.add(new String(next.key(), StandardCharsets.UTF_8));
            }
        }
        return keys;
    }

    @Test
    void aRangeSeesOneSnapshot() {
        open();
        apply(b("a"), Record.value(1, b("A")));
        apply(b("b"), Record.value(1, b("B")));
        try (RangeCursor cursor = store.openRange(b("a"), null)) {
            apply(b("b"), Record.tombstone(2));
            apply(b("c"), Record.value(2, b("C")));
            assertThat(cursor.next().record()).isEqualTo(Record.value(1, b("A")));
            assertThat(cursor.next().record()).isEqualTo(Record.value(1, b("B")));
            assertThat(cursor.next()).isNull();
        }
    }

    @Test
    void survivesAReopen() {
        open();
        for (int i = 0; i < 1000; i++) {
            apply(b("key" + i), i % 10 == 0 ? Record.tombstone(i) : Record.value(i, b("value" + i)));
        }
        store.close();
        open();
        for (int i = 0; i < 1000; i++) {
            assertThat(store.get(b("key" + i))).contains(i % 10 == 0 ? Record.tombstone(i) : Record.value(i, b("value" + i)));
        }
    }

    @Test
    void purgeDropsOnlyTombstonesOlderThanTheCutoffThatAreStillTheRecord() {
        open();
        apply("old-delete", Record.tombstone(100));
        apply("recent-delete", Record.tombstone(300));
        apply("re-created", Record.tombstone(100));
        apply("re-created", Record.value(150, b("back")));
        apply("value", Record.value(50, b("v")));

        assertThat(new TombstoneIndex(store).purgeTombstonesBefore(200).total()).isEqualTo(1);
        assertThat(store.get(b("old-delete"))).as("older than the cutoff").isEmpty();
        assertThat(store.get(b("recent-delete"))).as("newer than the cutoff").contains(Record.tombstone(300));
        assertThat(store.get(b("re-created"))).as("its tombstone was replaced").contains(Record.value(150, b("back")));
        assertThat(store.get(b("value"))).as("values never expire").contains(Record.value(50, b("v")));
        assertThat(new TombstoneIndex(store).purgeTombstonesBefore(200).total()).as("nothing left to drop").isZero();
        assertThat(new TombstoneIndex(store).purgeTombstonesBefore(Long.MAX_VALUE).total()).isEqualTo(1);
    }

    @Test
    void manyWritesAtOnceFromManyThreadsKeepTheNewestOfEachKey() throws Exception {
        open();
        java.util.List<CompletableFuture<Boolean>> writes = new ArrayList<>();
        java.util.concurrent.ExecutorService threads = java.util.concurrent.Executors.newFixedThreadPool(4);
        try {
            List<java.util.concurrent.Future<?>> writers = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                int thread = t;
                writers.add(threads.submit(() -> {
                    for (int i = 0; i < 2000; i++) {
                        var written = store.apply(b("key" + (i % 100)), Record.value(thread * 10_000L + i, b("v" + thread + "-" + i)));
                        synchronized (writes) {
                            writes.add(written);
                        }
                    }
                }));
            }
            for (var writer : writers) {
                writer.get();
            }
        } finally {
            threads.shutdown();
        }
        writes.forEach(CompletableFuture::join);
        for (int k = 0; k < 100; k++) {
            // The newest write of key k: thread 3's last i with i % 100 == k.
            int last = 1900 + k;
            assertThat(store.get(b("key" + k))).contains(Record.value(30_000L + last, b("v3-" + last)));
        }
    }

    @Test
    void aCacheOnlyReadAnswersFromMemoryOrSaysItCannot() {
        open();
        apply("k", Record.value(1, b("v")));
        assertThat(store.getIfCached(b("k")).known()).as("in the memtable").isTrue();
        assertThat(store.getIfCached(b("k")).found()).contains(Record.value(1, b("v")));
        assertThat(store.getIfCached(b("absent")).known()).isTrue();
        assertThat(store.getIfCached(b("absent")).found()).isEmpty();
        store.compact();
        // Flushed and compacted: whatever the cache holds now, a miss is reported, never read from disk.
        var lookup = store.getIfCached(b("k"));
        assertThat(!lookup.known() || lookup.found().equals(java.util.Optional.of(Record.value(1, b("v"))))).isTrue();
        assertThat(store.get(b("k"))).contains(Record.value(1, b("v")));
        // That read brought the record's block into the cache: from memory now.
        assertThat(store.getIfCached(b("k")).known()).as("in the block cache").isTrue();
        assertThat(store.getIfCached(b("k")).found()).contains(Record.value(1, b("v")));
    }

    /**
     * RocksDB's cache-only look-up says "found" with an empty value when the table's index block
     * is not in the block cache (facebook/rocksdb#12921): that is a miss, not a record. Large
     * values churn the cache until it happens; before, the look-up threw and the peer server
     * closed the connection, failing every range stream on it.
     */
    @Test
    void aCacheOnlyReadWhoseIndexBlockWasEvictedIsAMissNotAnError() {
        store = RocksStore.open(new StorageSettings(dir, 64 * 1024, false, 10_000, 64L << 20, 64L << 20, HashRing::token, 21_600), LastWriteWins.ORDER);
        // Two versions, so that compaction writes a new table file: one only moved down from
        // level 0 keeps its index block pinned in the cache.
        apply("a-key", Record.value(1, b("v1")));
        store.compact();
        apply("a-key", Record.value(2, b("v")));
        store.compact();
        // Another table file, of blocks larger than the cache: reading them evicts a-key's index block.
        java.util.Random random = new java.util.Random(1);
        for (int i = 0; i < 20; i++) {
            byte[] large = new byte[256 * 1024];
            random.nextBytes(large);
            apply("z-" + i, Record.value(1, large));
        }
        store.compact();
        int misses = 0;
        for (int i = 0; i < 40; i++) {
            assertThat(store.get(b("z-" + i % 20))).as("a read from disk").isPresent();
            var lookup = store.getIfCached(b("a-key"));
            if (lookup.known()) {
                assertThat(lookup.found()).contains(Record.value(2, b("v")));
            } else {
                misses++;
            }
        }
        assertThat(misses).as("look-ups the small cache could not answer").isPositive();
    }

    /** Two stores with the same keys and versions have the same digest, whatever the values or order. */
    @Test
    void theTokenIndexDigestsKeysAndVersions() throws Exception {
        open();
        for (int i = 0; i < 200; i++) {
            apply("k" + i, Record.value(i + 1, b("v" + i)));
        }
        apply("gone", Record.tombstone(500));
        TokenIndex.Digest all = new TokenIndex(store).digest(Long.MIN_VALUE, Long.MAX_VALUE);
        assertThat(all.keys()).isEqualTo(201);
        TokenIndex.Digest low = new TokenIndex(store).digest(Long.MIN_VALUE, -1);
        TokenIndex.Digest high = new TokenIndex(store).digest(0, Long.MAX_VALUE);
        assertThat(low.keys() + high.keys()).isEqualTo(201);
        assertThat(low.hash() ^ high.hash()).as("XOR: the halves make the whole").isEqualTo(all.hash());

        List<KeyedRecord> scanned = new ArrayList<>();
        try (RecordCursor cursor = new TokenIndex(store).openTokenRange(Long.MIN_VALUE, Long.MAX_VALUE)) {
            for (KeyedRecord next = cursor.next(); next != null; next = cursor.next()) {
                scanned.add(next);
            }
        }
        assertThat(scanned).hasSize(201).extracting(entry -> HashRing.token(entry.key())).isSorted();
        KeyedRecord gone = scanned.stream().filter(entry -> Arrays.equals(entry.key(), b("gone"))).findFirst().orElseThrow();
        assertThat(gone.record().tombstone()).isTrue();
        assertThat(gone.record().timestamp()).isEqualTo(500);

        apply("k7", Record.value(1000, b("newer")));
        assertThat(new TokenIndex(store).digest(Long.MIN_VALUE, Long.MAX_VALUE).hash()).as("a new version changes the digest").isNotEqualTo(all.hash());
        assertThat(new TokenIndex(store).digest(Long.MIN_VALUE, Long.MAX_VALUE).keys()).as("but not the count").isEqualTo(201);
    }

    @Test
    void hintsAndFactsSurviveAReopen() {
        open();
        for (int i = 0; i < 5; i++) {
            new HintStore(store).put(b("peer-a\0" + i), b("hint" + i)).join();
        }
        new HintStore(store).put(b("peer-b\0" + 0), b("other")).join();
        new MetaStore(store).put("fact", b("kept")).join();
        store.close();
        open();
        List<byte[][]> first = new HintStore(store).page(b("peer-a\0"), null, 3);
        assertThat(first).hasSize(3);
        List<byte[][]> rest = new HintStore(store).page(b("peer-a\0"), first.get(2)[0], 10);
        assertThat(rest).extracting(hint -> new String(hint[1], StandardCharsets.UTF_8)).containsExactly("hint3", "hint4");
        new HintStore(store).delete(first.get(0)[0]).join();
        assertThat(new HintStore(store).page(b("peer-a\0"), null, 10)).hasSize(4);
        assertThat(new HintStore(store).page(new byte[0], null, 10)).as("both peers' hints").hasSize(5);
        assertThat(new MetaStore(store).get("fact")).map(bytes -> new String(bytes, StandardCharsets.UTF_8)).contains("kept");
        assertThat(store.get(b("peer-a\0" + 1))).as("hints are not records").isEmpty();
    }

    @Test
    void movesTheRecordsOfThePreviousLayoutAtTheFirstOpen() throws Exception {
        List<ColumnFamilyHandle> handles = new ArrayList<>();
        try (DBOptions options = new DBOptions().setCreateIfMissing(true).setCreateMissingColumnFamilies(true);
                ColumnFamilyOptions family = new ColumnFamilyOptions();
                TtlDB old = TtlDB.open(options, dir.toString(), List.of(
                        new ColumnFamilyDescriptor(RocksDB.DEFAULT_COLUMN_FAMILY, family),
                        new ColumnFamilyDescriptor(b("live"), family),
                        new ColumnFamilyDescriptor(b("tombstones"), family)), handles, List.of(0, 0, 86_400), false)) {
            old.put(handles.get(1), b("kept"), Record.value(7, b("seven")).encoded());
            old.put(handles.get(2), b("deleted"), Record.tombstone(8).encoded());
            handles.forEach(ColumnFamilyHandle::close);
        }
        open();
        assertThat(store.get(b("kept"))).contains(Record.value(7, b("seven")));
        assertThat(store.get(b("deleted"))).contains(Record.tombstone(8));
        assertThat(new TokenIndex(store).digest(Long.MIN_VALUE, Long.MAX_VALUE).keys()).as("both are in the token index").isEqualTo(2);
        assertThat(new TombstoneIndex(store).purgeTombstonesBefore(9).total()).as("the tombstone is indexed too").isEqualTo(1);
        store.close();
        try (Options options = new Options()) {
            assertThat(RocksDB.listColumnFamilies(options, dir.toString()))
                    .extracting(name -> new String(name, StandardCharsets.UTF_8))
                    .containsExactlyInAnyOrder("default", "records", "tombstones-by-time", "by-token", "hints", "meta", "paxos", "expiring");
        }
        store = null;
    }

    @Test
    void closingWithAnOpenCursorReleasesItAndRefusesFurtherCalls() {
        open();
        apply(b("a"), Record.value(1, b("A")));
        RangeCursor cursor = store.openRange(b("a"), null);
        store.close();
        assertThatThrownBy(cursor::next).isInstanceOf(StorageException.class);
        assertThatThrownBy(() -> store.get(b("a"))).isInstanceOf(StorageException.class);
        cursor.close();
        assertThat(store.isOpen()).isFalse();
    }

    @Test
    void refusesASecondOpenOfTheSameDirectory() {
        open();
        assertThatThrownBy(() -> RocksStore.open(new StorageSettings(dir, 1024 * 1024, false, 10, 1 << 20, 64L << 20, HashRing::token, 21_600), LastWriteWins.ORDER))
                .isInstanceOf(StorageException.class)
                .hasMessageContaining(dir.toString());
    }

    private long walBytes() throws IOException {
        try (var files = Files.list(dir)) {
            return files.filter(file -> file.getFileName().toString().endsWith(".log")).mapToLong(file -> file.toFile().length()).sum();
        }
    }

    /**
     * The write-ahead log stays near its bound although the meta family, written once, never
     * fills its memtable: without the bound, its one entry kept every log file since alive.
     */
    @Test
    void theWriteAheadLogStaysNearItsBoundWhileARarelyWrittenFamilyHoldsItsOldestFile() throws Exception {
        long walBound = 2L << 20;
        store = RocksStore.open(new StorageSettings(dir, 1 << 20, false, 10_000, 64L << 20, walBound, HashRing::token, 21_600),
                LastWriteWins.ORDER);
        new MetaStore(store).put("written-once", b("x")).join();
        byte[] value = new byte[16 << 10];
        ThreadLocalRandom.current().nextBytes(value);
        // 64 MiB of records, four record memtables: without the bound every log file stays, 64 MiB
        // and more, while with it the log holds at most what two memtables do.
        List<CompletableFuture<Boolean>> writes = new ArrayList<>();
        for (int i = 0; i < 64 * 64; i++) {
            writes.add(store.apply(b("k" + i), Record.value(i + 1, value)));
            if (writes.size() == 128) {
                writes.forEach(CompletableFuture::join);
                writes.clear();
            }
        }
        writes.forEach(CompletableFuture::join);
        // The flushes the bound asks for, and the deletion of the files they free, run in the
        // background. While one flush runs RocksDB starts no other for the bound, so on a slow disk
        // the log can hold the bound, the memtable being flushed (16 MiB) and the one filling (16 MiB).
        Awaitility.await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(100)).untilAsserted(() ->
                assertThat(walBytes()).as("bytes of write-ahead log on disk").isLessThan(walBound + (32L << 20)));
        assertThat(new MetaStore(store).get("written-once")).hasValueSatisfying(bytes -> assertThat(bytes).isEqualTo(b("x")));
    }
}
