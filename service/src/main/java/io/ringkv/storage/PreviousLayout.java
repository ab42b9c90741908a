package io.ringkv.storage;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.function.ToLongFunction;

import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.ringkv.record.Record;
import io.ringkv.record.RecordCodec;

/**
 * Where an earlier version kept its data: moved into {@code records} at the first open, with the
 * indexes built as they go. Runs once, while {@link RocksStore} opens, on the handle it borrows.
 */
final class PreviousLayout {

    private static final Logger log = LoggerFactory.getLogger(PreviousLayout.class);

    /** Two families opened through RocksDB's TtlDB, each value followed by 4 bytes of write time. */
    private static final List<byte[]> NAMES = List.of(
            "live".getBytes(StandardCharsets.UTF_8), "tombstones".getBytes(StandardCharsets.UTF_8));
    private static final int TTL_SUFFIX = 4;
    private static final int BATCH = 10_000;
    private static final byte[] NOTHING = new byte[0];

    private PreviousLayout() {
    }

    /** Which of the previous layout's families the store still has. */
    static List<byte[]> columnFamilies(List<byte[]> existing) {
        return NAMES.stream().filter(name -> existing.stream().anyMatch(e -> Arrays.equals(e, name))).toList();
    }

    /**
     * Copies every record into the new families, then drops the old ones: a crash before the
     * drop repeats the copy at the next open, which writes the same records again.
     */
    static void migrate(RocksStore store, ToLongFunction<byte[]> token, List<ColumnFamilyHandle> old) throws RocksDBException {
        long moved = 0;
        for (ColumnFamilyHandle family : old) {
            try (RocksIterator iterator = store.db().newIterator(family); Batches batches = new Batches(store.db())) {
                for (iterator.seekToFirst(); iterator.isValid(); iterator.next()) {
                    byte[] stored = iterator.value();
                    Record record = RecordCodec.decode(Arrays.copyOf(stored, stored.length - TTL_SUFFIX));
                    batches.put(store.families().records(), iterator.key(), record.encoded());
                    batches.put(store.families().byToken(), TokenIndex.tokenKey(token.applyAsLong(iterator.key()), iterator.key()),
                            TokenIndex.version(record));
                    if (record.tombstone()) {
                        batches.put(store.families().tombstonesByTime(), TombstoneIndex.indexKey(record.timestamp(), iterator.key()), NOTHING);
                    }
                    moved++;
                }
                iterator.status();
            }
        }
        for (ColumnFamilyHandle family : old) {
            store.db().dropColumnFamily(family);
            family.close();
        }
        log.info("moved {} records from the previous storage layout (live, tombstones) into 'records'", moved);
    }

    /** Builds the token index of a store whose records were written before it existed. */
    static void indexTokens(RocksStore store, ToLongFunction<byte[]> token) throws RocksDBException {
        long indexed = 0;
        try (RocksIterator iterator = store.db().newIterator(store.families().records()); Batches batches = new Batches(store.db())) {
            for (iterator.seekToFirst(); iterator.isValid(); iterator.next()) {
                Record record = RecordCodec.decode(iterator.value());
                batches.put(store.families().byToken(), TokenIndex.tokenKey(token.applyAsLong(iterator.key()), iterator.key()),
                        TokenIndex.version(record));
                indexed++;
            }
            iterator.status();
        }
        log.info("indexed {} records by token", indexed);
    }

    /** Puts in synced batches of {@value #BATCH}: a rewrite at open holds neither the whole store in memory nor its WAL. */
    private static final class Batches implements AutoCloseable {
        private final RocksDB db;
        private final WriteOptions options = new WriteOptions().setSync(true);
        private WriteBatch batch = new WriteBatch();

        Batches(RocksDB db) {
            this.db = db;
        }

        void put(ColumnFamilyHandle family, byte[] key, byte[] value) throws RocksDBException {
            batch.put(family, key, value);
            if (batch.count() >= BATCH) {
                db.write(options, batch);
                batch.close();
                batch = new WriteBatch();
            }
        }

        /** Writes what is left. */
        @Override
        public void close() throws RocksDBException {
            try {
                db.write(options, batch);
            } finally {
                batch.close();
                options.close();
            }
        }
    }
}
