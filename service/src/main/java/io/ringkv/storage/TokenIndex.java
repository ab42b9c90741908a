package io.ringkv.storage;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Optional;

import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;

import io.ringkv.record.KeyedRecord;
import io.ringkv.record.Record;

/**
 * The {@code by-token} column family: every key by its position on the hash ring, with its
 * version (timestamp and whether it is a tombstone), so that the keys of a token range, and a
 * digest of them, come from one short scan: what repair and data movement read. It borrows the
 * store's handle; {@link BatchCommit} keeps it in step with the records.
 */
public final class TokenIndex {

    private static final byte[] NO_VALUE = new byte[0];

    /** A digest of the keys in a token interval: equal on two replicas when they hold the same versions. */
    public record Digest(long hash, long keys) {
    }

    private final RocksStore store;

    public TokenIndex(RocksStore store) {
        this.store = store;
    }

    /**
     * A key's place in the token index: its token with the sign bit flipped, big-endian, so that
     * RocksDB's byte order is the ring's (signed) order, then the key.
     */
    static byte[] tokenKey(long token, byte[] key) {
        return ByteBuffer.allocate(8 + key.length).putLong(token ^ Long.MIN_VALUE).put(key).array();
    }

    private static long tokenOf(byte[] tokenKey) {
        return ByteBuffer.wrap(tokenKey).getLong() ^ Long.MIN_VALUE;
    }

    /** A version as the index keeps it: 1 byte, tombstone or not; 8 bytes of timestamp. */
    static byte[] version(Record record) {
        return ByteBuffer.allocate(9).put((byte) (record.tombstone() ? 1 : 0)).putLong(record.timestamp()).array();
    }

    static Record versionRecord(byte[] version) {
        ByteBuffer buffer = ByteBuffer.wrap(version);
        boolean tombstone = buffer.get() == 1;
        long timestamp = buffer.getLong();
        return tombstone ? Record.tombstone(timestamp) : Record.value(timestamp, NO_VALUE);
    }

    /**
     * The digest of the keys with a token in {@code [low, high]} (signed, inclusive): the XOR of one
     * hash per key and version, so that it does not depend on order. Blocking.
     */
    public Digest digest(long low, long high) {
        return store.guarded(() -> {
            long hash = 0;
            long keys = 0;
            try (TokenScan scan = new TokenScan(low, high)) {
                for (byte[][] entry = scan.next(); entry != null; entry = scan.next()) {
                    hash ^= VersionHash.of(entry[0], entry[1]);
                    keys++;
                }
            }
            return new Digest(hash, keys);
        });
    }

    /** The digests (hash, keys, hash, keys, ...) of token intervals (low, high, low, high, ...). Blocking. */
    public long[] digests(long[] intervals) {
        long[] digests = new long[intervals.length];
        for (int i = 0; i < intervals.length; i += 2) {
            Digest digest = digest(intervals[i], intervals[i + 1]);
            digests[i] = digest.hash();
            digests[i + 1] = digest.keys();
        }
        return digests;
    }

    /** Whether the token intervals (low, high, ...) hold at least {@code keys} keys; counting stops there. Blocking. */
    public boolean holdsAtLeast(long[] intervals, long keys) {
        return store.guarded(() -> {
            long counted = 0;
            for (int i = 0; i < intervals.length && counted < keys; i += 2) {
                try (TokenScan scan = new TokenScan(intervals[i], intervals[i + 1])) {
                    while (counted < keys && scan.next() != null) {
                        counted++;
                    }
                }
            }
            return counted >= keys;
        });
    }

    /**
     * The whole records (tombstones included) of the keys with a token in the intervals (low,
     * high, ...: sorted, not overlapping), in token order, each read by its key: for a few of the
     * store's keys, where a scan of all of them would cost more. The caller closes it.
     */
    public RecordCursor openRecords(long[] intervals) {
        return new RecordCursor() {
            private int next;
            private TokenScan scan;

            @Override
            public KeyedRecord next() {
                while (true) {
                    if (scan == null) {
                        if (next >= intervals.length) {
                            return null;
                        }
                        scan = store.guarded(() -> new TokenScan(intervals[next], intervals[next + 1]));
                        next += 2;
                    }
                    byte[][] entry = store.guarded(scan::next);
                    if (entry == null) {
                        scan.close();
                        scan = null;
                        continue;
                    }
                    byte[] key = Arrays.copyOfRange(entry[0], 8, entry[0].length);
                    // Gone since the index was read (purged, or cleaned up): nothing to send.
                    Optional<Record> record = store.get(key);
                    if (record.isPresent()) {
                        return new KeyedRecord(key, record.get());
                    }
                }
            }

            @Override
            public void close() {
                if (scan != null) {
                    scan.close();
                    scan = null;
                }
            }
        };
    }

    /**
     * The keys with a token in {@code [low, high]} in token order, each with its version only: a
     * {@link Record} with the timestamp and tombstone flag and an empty value. The caller closes it.
     */
    public RecordCursor openTokenRange(long low, long high) {
        TokenScan scan = store.guarded(() -> new TokenScan(low, high));
        return new RecordCursor() {
            @Override
            public KeyedRecord next() {
                byte[][] entry = store.guarded(scan::next);
                if (entry == null) {
                    return null;
                }
                byte[] key = Arrays.copyOfRange(entry[0], 8, entry[0].length);
                return new KeyedRecord(key, versionRecord(entry[1]));
            }

            @Override
            public void close() {
                scan.close();
            }
        };
    }

    /** An iterator over the token index between two tokens; entries are {index key, version}. */
    private final class TokenScan implements AutoCloseable {
        private final long high;
        private final ReadOptions options = new ReadOptions().setFillCache(false);
        private final RocksIterator iterator;
        private boolean closed;

        TokenScan(long low, long high) {
            this.high = high;
            iterator = store.db().newIterator(store.families().byToken(), options);
            iterator.seek(ByteBuffer.allocate(8).putLong(low ^ Long.MIN_VALUE).array());
        }

        byte[][] next() throws RocksDBException {
            if (closed || !iterator.isValid()) {
                iterator.status();
                return null;
            }
            byte[] key = iterator.key();
            if (tokenOf(key) > high) {
                return null;
            }
            byte[][] entry = {key, iterator.value()};
            iterator.next();
            return entry;
        }

        @Override
        public void close() {
            if (!closed) {
                closed = true;
                iterator.close();
                options.close();
            }
        }
    }
}
