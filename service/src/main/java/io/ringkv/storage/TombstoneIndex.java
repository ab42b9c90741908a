package io.ringkv.storage;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import org.rocksdb.ReadOptions;
import org.rocksdb.RocksIterator;

import io.ringkv.record.Record;

/**
 * The {@code tombstones-by-time} column family: the tombstones by their timestamp, so that those
 * past the grace period are found without scanning the data, and the records that expire by their
 * expiry (as a timestamp), each with its own timestamp as the entry's value: once expired, such a
 * record is a tombstone of that timestamp to readers, and goes as one. It borrows the store's
 * handle; {@link BatchCommit} keeps it in step with the records.
 */
public final class TombstoneIndex {

    private static final int TIMESTAMP_BYTES = 8;

    private final RocksStore store;

    public TombstoneIndex(RocksStore store) {
        this.store = store;
    }

    /** A tombstone's place in the index: its timestamp, big-endian, then the key. */
    static byte[] indexKey(long timestamp, byte[] key) {
        return ByteBuffer.allocate(TIMESTAMP_BYTES + key.length).putLong(timestamp).put(key).array();
    }

    /** The value of an expiring record's entry: the record's timestamp, big-endian (a tombstone's is empty). */
    static byte[] expiredVersion(long timestamp) {
        return ByteBuffer.allocate(TIMESTAMP_BYTES).putLong(timestamp).array();
    }

    /**
     * What a purge dropped: tombstones, and values that expired (each as the tombstone it became,
     * its value's bytes gone already in compaction).
     */
    public record Purged(long tombstones, long expired) {
        public long total() {
            return tombstones + expired;
        }
    }

    /**
     * Drops the tombstones with a timestamp before {@code timestamp}, and the values that expired
     * before it, found through their index, each only if it is still the key's record. Blocking:
     * it waits for the writer.
     */
    public Purged purgeTombstonesBefore(long timestamp) {
        List<CompletableFuture<Boolean>> tombstones = new ArrayList<>();
        List<CompletableFuture<Boolean>> expired = new ArrayList<>();
        store.guarded(() -> {
            try (ReadOptions options = new ReadOptions().setFillCache(false);
                    RocksIterator index = store.db().newIterator(store.families().tombstonesByTime(), options)) {
                for (index.seekToFirst(); index.isValid(); index.next()) {
                    ByteBuffer entry = ByteBuffer.wrap(index.key());
                    long deleted = entry.getLong();
                    // Timestamps are non-negative, so their big-endian bytes sort as the numbers do.
                    if (deleted >= timestamp) {
                        break;
                    }
                    byte[] key = new byte[entry.remaining()];
                    entry.get(key);
                    byte[] version = index.value();
                    if (version.length == TIMESTAMP_BYTES) {
                        expired.add(store.removeIfUnchanged(key, Record.tombstone(ByteBuffer.wrap(version).getLong())));
                    } else {
                        tombstones.add(store.removeIfUnchanged(key, Record.tombstone(deleted)));
                    }
                }
                index.status();
            }
            return null;
        });
        return new Purged(tombstones.stream().filter(CompletableFuture::join).count(), expired.stream().filter(CompletableFuture::join).count());
    }
}
