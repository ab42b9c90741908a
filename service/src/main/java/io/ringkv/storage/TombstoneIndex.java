package io.ringkv.storage;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

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
    /** Removals queued for the writer at once by a purge. */
    private static final int IN_FLIGHT = 1_000;

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
     * before it, found through their index, each only if it is still the key's record. At most
     * {@value #IN_FLIGHT} removals wait for the writer at once: a million values expiring together
     * were a million removals queued at once, which filled the writer's queue, refused the
     * clients' writes meanwhile (504) and failed the purge itself. A removal refused ends the pass
     * (the next one goes on). Blocking: it waits for the writer, with no hold on the store.
     */
    public Purged purgeTombstonesBefore(long timestamp) {
        long tombstones = 0;
        long expired = 0;
        byte[] after = null;
        while (true) {
            List<Entry> entries = entriesBefore(timestamp, after);
            List<CompletableFuture<Boolean>> removals = new ArrayList<>(entries.size());
            entries.forEach(entry -> removals.add(store.removeIfUnchanged(entry.key(), entry.version())));
            for (int i = 0; i < entries.size(); i++) {
                try {
                    if (removals.get(i).join()) {
                        if (entries.get(i).expired()) {
                            expired++;
                        } else {
                            tombstones++;
                        }
                    }
                } catch (CompletionException refused) {
                    return new Purged(tombstones, expired);
                }
            }
            if (entries.size() < IN_FLIGHT) {
                return new Purged(tombstones, expired);
            }
            after = entries.get(entries.size() - 1).indexKey();
        }
    }

    /** An entry of the index: the record it names, as a version to remove if unchanged. */
    private record Entry(byte[] indexKey, byte[] key, Record version, boolean expired) {
    }

    /** The next {@value #IN_FLIGHT} entries before {@code timestamp}, after the index key {@code after} (null: from the first). */
    private List<Entry> entriesBefore(long timestamp, byte[] after) {
        return store.guarded(() -> {
            List<Entry> entries = new ArrayList<>();
            try (ReadOptions options = new ReadOptions().setFillCache(false);
                    RocksIterator index = store.db().newIterator(store.families().tombstonesByTime(), options)) {
                if (after == null) {
                    index.seekToFirst();
                } else {
                    index.seek(after);
                    if (index.isValid() && Arrays.equals(index.key(), after)) {
                        index.next();
                    }
                }
                for (; index.isValid() && entries.size() < IN_FLIGHT; index.next()) {
                    byte[] indexKey = index.key();
                    ByteBuffer entry = ByteBuffer.wrap(indexKey);
                    long deleted = entry.getLong();
                    // Timestamps are non-negative, so their big-endian bytes sort as the numbers do.
                    if (deleted >= timestamp) {
                        break;
                    }
                    byte[] key = new byte[entry.remaining()];
                    entry.get(key);
                    byte[] version = index.value();
                    boolean expired = version.length == TIMESTAMP_BYTES;
                    entries.add(new Entry(indexKey, key, Record.tombstone(expired ? ByteBuffer.wrap(version).getLong() : deleted), expired));
                }
                index.status();
            }
            return entries;
        });
    }
}
