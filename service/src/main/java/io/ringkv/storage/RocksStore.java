package io.ringkv.storage;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.ToLongFunction;
import java.util.concurrent.locks.ReentrantReadWriteLock;

import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.BloomFilter;
import org.rocksdb.Cache;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.CompressionType;
import org.rocksdb.DBOptions;
import org.rocksdb.FlushOptions;
import org.rocksdb.Holder;
import org.rocksdb.HyperClockCache;
import org.rocksdb.Options;
import org.rocksdb.ReadOptions;
import org.rocksdb.ReadTier;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.Slice;
import org.rocksdb.Snapshot;
import org.rocksdb.Statistics;
import org.rocksdb.StatsLevel;
import org.rocksdb.TickerType;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Owns the RocksDB instance of a node: its options, its column families, the one thread that
 * writes, and closing them all in the right order. Reads may come from any thread; every method
 * that can wait for the disk is blocking and runs on the storage scheduler, except
 * {@link #getIfCached}, which never touches the disk and so may run on an event loop.
 *
 * <p>Layout, in column families:
 * <ul>
 * <li>{@code records}: each key's newest version, a value or a tombstone ({@link RecordCodec}),
 * so a read is one look-up;
 * <li>{@code tombstones-by-time}: the tombstones by their timestamp, so that those past the grace
 * period are found without scanning the data ({@link #purgeTombstonesBefore});
 * <li>{@code by-token}: every key by its position on the hash ring, with its version (timestamp and
 * whether it is a tombstone), so that the keys of a token range, and a digest of them, come
 * from one short scan ({@link #openTokenRange}, {@link #digest}): what repair and data movement use;
 * <li>{@code hints}: writes waiting for a replica that missed them ({@link #hints});
 * <li>{@code meta}: the node's own small facts (its state, repair times), {@link #meta}.
 * </ul>
 * The indexes change in the same atomic batch as the record they index.
 *
 * <p>Writes keep the newest version only, by the version order given at open: a replica that
 * receives an older write than it holds (reordered or retried) leaves its record alone. They are a
 * read-modify-write, done by a single writer thread ({@link WriteQueue}) that takes every write
 * waiting and commits them in one batch: no locks, one write-ahead-log append (and with
 * {@code syncWrites} one fsync) for many writes, and no pile-up of threads inside RocksDB.
 */
public final class RocksStore implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(RocksStore.class);

    private static final byte[] RECORDS = "records".getBytes(StandardCharsets.UTF_8);
    private static final byte[] TOMBSTONES_BY_TIME = "tombstones-by-time".getBytes(StandardCharsets.UTF_8);
    private static final byte[] BY_TOKEN = "by-token".getBytes(StandardCharsets.UTF_8);
    private static final byte[] HINTS = "hints".getBytes(StandardCharsets.UTF_8);
    private static final byte[] META = "meta".getBytes(StandardCharsets.UTF_8);
    private static final int TIMESTAMP_BYTES = 8;
    private static final byte[] NOTHING = new byte[0];

    static {
        RocksDB.loadLibrary();
    }

    /** What a read that may not touch the disk found. */
    public record Lookup(boolean known, Record record) {
        static final Lookup NOT_CACHED = new Lookup(false, null);
        static final Lookup ABSENT = new Lookup(true, null);

        /** The record, or empty for none; only when {@link #known()}. */
        public Optional<Record> found() {
            return Optional.ofNullable(record);
        }
    }

    private final Comparator<Record> versionOrder;
    private final Cache blockCache;
    private final BloomFilter bloomFilter;
    private final ColumnFamilyOptions recordOptions;
    private final ColumnFamilyOptions indexOptions;
    private final DBOptions dbOptions;
    private final Statistics statistics;
    private final WriteOptions writeOptions;
    private final ReadOptions cachedReads;
    private final RocksDB db;
    private final ColumnFamilyHandle records;
    private final ColumnFamilyHandle tombstonesByTime;
    private final ColumnFamilyHandle byToken;
    private final ColumnFamilyHandle hints;
    private final ColumnFamilyHandle meta;
    private final ToLongFunction<byte[]> token;
    private final WriteQueue writes;
    /** Where the writer thread reads a stored record's header: only the writer uses it. */
    private final byte[] storedHeader = new byte[RecordCodec.HEADER_SIZE];

    /** Operations hold it shared; {@link #close()} takes it exclusively, so no native call outlives the handle. */
    private final ReentrantReadWriteLock lifecycle = new ReentrantReadWriteLock();
    private final Set<RangeCursor> openCursors = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;
    /** Point reads answered from memory by getIfCached, and those that had to go to get. */
    private final LongAdder readsFromMemory = new LongAdder();
    private final LongAdder readsNotInMemory = new LongAdder();

    private RocksStore(StorageSettings settings, Comparator<Record> versionOrder) throws RocksDBException {
        this.versionOrder = versionOrder;
        this.token = settings.token();
        // Off-heap and shared by both column families: the JVM heap (jvm.heapPercent of the
        // container's memory limit, helm/ringkv/values.yaml) does not hold it, so it is sized
        // against the container's memory beside the heap. HyperClockCache looks up
        // without locks, which lets event loops read from it (getIfCached).
        blockCache = new HyperClockCache(settings.blockCacheBytes(), 0, -1, false);
        // 10 bits a key gives about 1% false positives: most GETs of an absent key skip the disk.
        bloomFilter = new BloomFilter(10);
        BlockBasedTableConfig table = new BlockBasedTableConfig()
                .setBlockCache(blockCache)
                .setFilterPolicy(bloomFilter)
                // Index and filter blocks count against the cache instead of growing without bound.
                .setCacheIndexAndFilterBlocks(true)
                .setPinL0FilterAndIndexBlocksInCache(true)
                // Keys are read whole, never by prefix.
                .setWholeKeyFiltering(true);

        recordOptions = new ColumnFamilyOptions()
                .setTableFormatConfig(table)
                // LZ4 on the upper levels is nearly free in CPU; ZSTD on the bottom level,
                // which holds about 90% of the data, saves disk at a cost paid only by compaction.
                .setCompressionType(CompressionType.LZ4_COMPRESSION)
                .setBottommostCompressionType(CompressionType.ZSTD_COMPRESSION)
                // Two 16 MiB memtables keep the write path's native memory small and predictable.
                .setWriteBufferSize(16L * 1024 * 1024)
                .setMaxWriteBufferNumber(2)
                .setLevelCompactionDynamicLevelBytes(true);
        // The index holds keys only: small memtables are plenty.
        indexOptions = new ColumnFamilyOptions()
                .setTableFormatConfig(table)
                .setCompressionType(CompressionType.LZ4_COMPRESSION)
                .setWriteBufferSize(4L * 1024 * 1024)
                .setMaxWriteBufferNumber(2)
                .setLevelCompactionDynamicLevelBytes(true);

        // Without the detailed timers (the costly part) statistics are cheap enough to leave on; their
        // block-cache tickers tell whether block-cache-size fits the working set.
        statistics = new Statistics();
        statistics.setStatsLevel(StatsLevel.EXCEPT_DETAILED_TIMERS);
        dbOptions = new DBOptions()
                .setStatistics(statistics)
                .setCreateIfMissing(true)
                .setCreateMissingColumnFamilies(true)
                // Two cores: one flush and one compaction thread at a time.
                .setMaxBackgroundJobs(2)
                // Smooths write-back of SST files instead of one large sync at the end of each.
                .setBytesPerSync(1024 * 1024)
                // Bounds the info LOG files a long-running node accumulates.
                .setKeepLogFileNum(5)
                // Bounds the write-ahead log: a log file is deleted only once every column family
                // with writes in it has flushed, and the rarely written ones (hints, meta) kept 45
                // files alive under a bulk load. Past this size the families holding the oldest
                // log are flushed, at the cost of small flushes of those families.
                .setMaxTotalWalSize(settings.maxWalBytes());

        // The write-ahead log stays on (the default): a write is acknowledged only once it is in the
        // log, so a crashed process loses nothing. syncWrites adds an fsync for machine crashes.
        writeOptions = new WriteOptions().setSync(settings.syncWrites());
        // Memtables and the block cache only: a miss is reported, never read from disk.
        cachedReads = new ReadOptions().setReadTier(ReadTier.BLOCK_CACHE_TIER);

        Path directory = settings.directory();
        List<byte[]> existing = existingColumnFamilies(directory);
        List<ColumnFamilyDescriptor> descriptors = new ArrayList<>();
        descriptors.add(new ColumnFamilyDescriptor(RocksDB.DEFAULT_COLUMN_FAMILY, recordOptions));
        descriptors.add(new ColumnFamilyDescriptor(RECORDS, recordOptions));
        descriptors.add(new ColumnFamilyDescriptor(TOMBSTONES_BY_TIME, indexOptions));
        descriptors.add(new ColumnFamilyDescriptor(BY_TOKEN, indexOptions));
        descriptors.add(new ColumnFamilyDescriptor(HINTS, indexOptions));
        descriptors.add(new ColumnFamilyDescriptor(META, indexOptions));
        List<byte[]> previousLayout = PreviousLayout.columnFamilies(existing);
        previousLayout.forEach(name -> descriptors.add(new ColumnFamilyDescriptor(name, recordOptions)));
        boolean tokenIndexIsNew = !existing.isEmpty() && existing.stream().noneMatch(name -> Arrays.equals(name, BY_TOKEN));
        List<ColumnFamilyHandle> handles = new ArrayList<>();
        db = RocksDB.open(dbOptions, directory.toString(), descriptors, handles);
        // The default family exists because RocksDB requires it; nothing is stored there.
        handles.get(0).close();
        records = handles.get(1);
        tombstonesByTime = handles.get(2);
        byToken = handles.get(3);
        hints = handles.get(4);
        meta = handles.get(5);
        if (!previousLayout.isEmpty()) {
            PreviousLayout.migrate(this, handles.subList(6, handles.size()));
        } else if (tokenIndexIsNew) {
            // Records written by a version without the index: index them once.
            PreviousLayout.indexTokens(this);
        }
        writes = new WriteQueue(this::commit, settings.writeQueueSize(), settings.writeQueueBytes());
    }

    public static RocksStore open(StorageSettings settings, Comparator<Record> versionOrder) {
        try {
            Files.createDirectories(settings.directory());
            return new RocksStore(settings, versionOrder);
        } catch (RocksDBException | java.io.IOException e) {
            throw new StorageException("cannot open the store in " + settings.directory() + ": " + e.getMessage(), e);
        }
    }

    private static List<byte[]> existingColumnFamilies(Path directory) throws RocksDBException {
        try (Options options = new Options()) {
            return RocksDB.listColumnFamilies(options, directory.toString());
        }
    }

    // ---- reads ---------------------------------------------------------------------------------

    /** The newest record this replica holds for the key, tombstones included. Blocking. */
    public Optional<Record> get(byte[] key) {
        return guarded(() -> Optional.ofNullable(decode(db.get(records, key))));
    }

    /**
     * The key's record if answering needs no disk read (it is in a memtable or the block cache),
     * else {@link Lookup#known()} is false and the caller asks {@link #get} on the storage
     * scheduler. Never blocks: safe on an event loop, where most reads of a working set that fits
     * the cache are answered without a thread hop.
     */
    public Lookup getIfCached(byte[] key) {
        // A store being closed is not waited for: the blocking path will report it.
        if (!lifecycle.readLock().tryLock()) {
            return Lookup.NOT_CACHED;
        }
        try {
            if (closed) {
                return Lookup.NOT_CACHED;
            }
            // keyMayExist reads only memory, like a get at the block-cache tier, but reports a
            // record that is not in memory by its answer rather than by an exception, whose
            // stack trace cost more than the rest of the look-up.
            Holder<byte[]> found = new Holder<>();
            if (!db.keyMayExist(records, cachedReads, key, found)) {
                readsFromMemory.increment();
                return Lookup.ABSENT;
            }
            // An empty value is a miss too: RocksDB reports "found" with no value when the table's
            // index block is not in the cache (facebook/rocksdb#12921), and a record is never empty.
            if (found.getValue() == null || found.getValue().length == 0) {
                readsNotInMemory.increment();
                return Lookup.NOT_CACHED;
            }
            readsFromMemory.increment();
            return new Lookup(true, RecordCodec.decode(found.getValue()));
        } finally {
            lifecycle.readLock().unlock();
        }
    }

    private static Record decode(byte[] bytes) {
        return bytes == null ? null : RecordCodec.decode(bytes);
    }

    // ---- writes --------------------------------------------------------------------------------

    /**
     * Stores the record unless this replica already holds a version that is at least as new.
     * Never blocks: the write is queued for the writer thread.
     *
     * @return completes with whether the record was written, once it is in the write-ahead log;
     *         fails with {@link StorageOverloadedException} at once when too many writes, or too
     *         many bytes of values, wait
     */
    public CompletableFuture<Boolean> apply(byte[] key, Record record) {
        return writes.submit(new WriteQueue.Write(WriteQueue.Kind.RECORD, key, record, null));
    }

    /**
     * Removes the key's record if it is still exactly this version: its timestamp and whether it
     * is a tombstone (a newer write may have replaced it meanwhile); through the writer, like
     * every change. For tombstones past their grace period, and for keys this node no longer owns.
     *
     * @return completes with whether the record was removed
     */
    public CompletableFuture<Boolean> removeIfUnchanged(byte[] key, Record version) {
        return writes.submit(new WriteQueue.Write(WriteQueue.Kind.REMOVE, key, version, null));
    }

    /**
     * Called by the writer thread alone: applies a batch of writes in order, each against what
     * the store and the earlier writes of the batch hold, in one atomic RocksDB write.
     *
     * @return for each write, whether it changed the store
     */
    private boolean[] commit(List<WriteQueue.Write> batch) {
        return guarded(() -> {
            boolean[] changed = new boolean[batch.size()];
            Map<ByteBuffer, Record> pending = new HashMap<>();
            try (WriteBatch rocks = new WriteBatch()) {
                for (int i = 0; i < batch.size(); i++) {
                    WriteQueue.Write write = batch.get(i);
                    changed[i] = switch (write.kind()) {
                        case RECORD, REMOVE -> commitRecord(write, pending, rocks);
                        case HINT_PUT -> put(rocks, hints, write.key(), write.bytes());
                        case HINT_DELETE -> delete(rocks, hints, write.key());
                        case META_PUT -> put(rocks, meta, write.key(), write.bytes());
                    };
                }
                if (rocks.count() > 0) {
                    db.write(writeOptions, rocks);
                }
            }
            return changed;
        });
    }

    /** A record write or removal, with its indexes, against the store and the batch so far. */
    private boolean commitRecord(WriteQueue.Write write, Map<ByteBuffer, Record> pending, WriteBatch rocks)
            throws RocksDBException {
        byte[] key = write.key();
        ByteBuffer id = ByteBuffer.wrap(key);
        Record current = pending.containsKey(id) ? pending.get(id) : stored(key, write.record());
        Record next = write.kind() == WriteQueue.Kind.REMOVE ? removed(current, write.record()) : newer(current, write.record());
        if (next == current) {
            return false;
        }
        pending.put(id, next);
        if (current != null && current.tombstone()) {
            rocks.delete(tombstonesByTime, indexKey(current.timestamp(), key));
        }
        byte[] tokenKey = tokenKey(token.applyAsLong(key), key);
        if (next == null) {
            rocks.delete(records, key);
            rocks.delete(byToken, tokenKey);
        } else {
            rocks.put(records, key, next.encoded());
            rocks.put(byToken, tokenKey, version(next));
            if (next.tombstone()) {
                rocks.put(tombstonesByTime, indexKey(next.timestamp(), key), NOTHING);
            }
        }
        return true;
    }

    /**
     * What the store holds for the key, as much as deciding about {@code incoming} needs: most
     * often only its version (its header, copied out of RocksDB without the value), and the whole
     * record only when the two versions tie and their values decide. Every write reads the key's
     * record first; reading the value as well cost a copy of it on the heap for nothing. Assumes,
     * as {@code LastWriteWins} does, a version order that compares values only between two
     * values of the same timestamp.
     */
    private Record stored(byte[] key, Record incoming) throws RocksDBException {
        int length = db.get(records, key, storedHeader);
        if (length == RocksDB.NOT_FOUND) {
            return null;
        }
        Record version = RecordCodec.decodeVersion(storedHeader, length);
        boolean valuesDecide = !version.tombstone() && !incoming.tombstone() && version.timestamp() == incoming.timestamp();
        return valuesDecide ? decode(db.get(records, key)) : version;
    }

    private static boolean put(WriteBatch rocks, ColumnFamilyHandle family, byte[] key, byte[] value) throws RocksDBException {
        rocks.put(family, key, value);
        return true;
    }

    private static boolean delete(WriteBatch rocks, ColumnFamilyHandle family, byte[] key) throws RocksDBException {
        rocks.delete(family, key);
        return true;
    }

    /** The record to keep: the incoming one if it is newer, else the current one (the same object). */
    private Record newer(Record current, Record incoming) {
        return current == null || versionOrder.compare(incoming, current) > 0 ? incoming : current;
    }

    private static Record removed(Record current, Record version) {
        return current != null && current.timestamp() == version.timestamp() && current.tombstone() == version.tombstone()
                ? null : current;
    }

    private static byte[] indexKey(long timestamp, byte[] key) {
        return ByteBuffer.allocate(TIMESTAMP_BYTES + key.length).putLong(timestamp).put(key).array();
    }

    // ---- the token index: what repair and data movement read ----------------------------------

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
    private static byte[] version(Record record) {
        return ByteBuffer.allocate(9).put((byte) (record.tombstone() ? 1 : 0)).putLong(record.timestamp()).array();
    }

    private static Record versionRecord(byte[] version) {
        ByteBuffer buffer = ByteBuffer.wrap(version);
        boolean tombstone = buffer.get() == 1;
        long timestamp = buffer.getLong();
        return tombstone ? Record.tombstone(timestamp) : Record.value(timestamp, NOTHING);
    }

    /** A digest of the keys in a token interval: equal on two replicas when they hold the same versions. */
    public record Digest(long hash, long keys) {
    }

    /**
     * The digest of the keys with a token in {@code [low, high]} (signed, inclusive): the XOR of one
     * hash per key and version, so that it does not depend on order. Blocking.
     */
    public Digest digest(long low, long high) {
        return guarded(() -> {
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

    /**
     * The keys with a token in {@code [low, high]} in token order, each with its version only: a
     * {@link Record} with the timestamp and tombstone flag and an empty value. The caller closes it.
     */
    public RecordCursor openTokenRange(long low, long high) {
        TokenScan scan = guarded(() -> new TokenScan(low, high));
        return new RecordCursor() {
            @Override
            public KeyedRecord next() {
                byte[][] entry = guarded(scan::next);
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
            iterator = db.newIterator(byToken, options);
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

    // ---- hints and the node's own facts --------------------------------------------------------

    /** Stores a hint; never blocks. */
    public CompletableFuture<Boolean> putHint(byte[] hintKey, byte[] value) {
        return writes.submit(new WriteQueue.Write(WriteQueue.Kind.HINT_PUT, hintKey, null, value));
    }

    /** Drops a hint; never blocks. */
    public CompletableFuture<Boolean> deleteHint(byte[] hintKey) {
        return writes.submit(new WriteQueue.Write(WriteQueue.Kind.HINT_DELETE, hintKey, null, null));
    }

    /**
     * The hints with keys that start with {@code prefix}, in key order, from {@code after}
     * (exclusive; null: from the first), at most {@code max}. Blocking.
     */
    public List<byte[][]> hints(byte[] prefix, byte[] after, int max) {
        return guarded(() -> {
            List<byte[][]> found = new ArrayList<>();
            try (RocksIterator iterator = db.newIterator(hints)) {
                iterator.seek(after == null ? prefix : after);
                if (after != null && iterator.isValid() && Arrays.equals(iterator.key(), after)) {
                    iterator.next();
                }
                for (; iterator.isValid() && found.size() < max; iterator.next()) {
                    byte[] key = iterator.key();
                    if (!startsWith(key, prefix)) {
                        break;
                    }
                    found.add(new byte[][] {key, iterator.value()});
                }
                iterator.status();
            }
            return found;
        });
    }

    private static boolean startsWith(byte[] bytes, byte[] prefix) {
        return bytes.length >= prefix.length && Arrays.equals(bytes, 0, prefix.length, prefix, 0, prefix.length);
    }

    /** Stores one of the node's own facts; never blocks. */
    public CompletableFuture<Boolean> putMeta(String key, byte[] value) {
        return writes.submit(new WriteQueue.Write(WriteQueue.Kind.META_PUT, key.getBytes(StandardCharsets.UTF_8), null, value));
    }

    /** One of the node's own facts. Blocking (RocksDB), but short: read at start and by background work. */
    public Optional<byte[]> meta(String key) {
        return guarded(() -> Optional.ofNullable(db.get(meta, key.getBytes(StandardCharsets.UTF_8))));
    }

    /** Whether the store holds no record at all. Blocking, at start. */
    public boolean isEmpty() {
        return guarded(() -> {
            try (RocksIterator iterator = db.newIterator(records)) {
                iterator.seekToFirst();
                iterator.status();
                return !iterator.isValid();
            }
        });
    }

    /**
     * Forgets everything: records, their indexes, hints and the node's own facts. Blocking; only
     * at start, before anything reads or writes (a volume whose node left the cluster comes back:
     * its data is older than what the cluster may have purged since).
     */
    public void clear() {
        guarded(() -> {
            for (ColumnFamilyHandle family : List.of(records, tombstonesByTime, byToken, hints, meta)) {
                byte[] last;
                try (RocksIterator iterator = db.newIterator(family)) {
                    iterator.seekToLast();
                    iterator.status();
                    last = iterator.isValid() ? iterator.key() : null;
                }
                if (last != null) {
                    // The end of a range delete is exclusive: the last key goes on its own.
                    db.deleteRange(family, NOTHING, last);
                    db.delete(family, last);
                    db.compactRange(family);
                }
            }
            return null;
        });
    }

    // ---- tombstones ----------------------------------------------------------------------------

    /**
     * Drops the tombstones with a timestamp before {@code timestamp}, found through their index,
     * each only if it is still the key's record. Blocking: it waits for the writer.
     *
     * @return how many were dropped
     */
    public long purgeTombstonesBefore(long timestamp) {
        List<CompletableFuture<Boolean>> purges = new ArrayList<>();
        guarded(() -> {
            try (ReadOptions options = new ReadOptions().setFillCache(false);
                    RocksIterator index = db.newIterator(tombstonesByTime, options)) {
                for (index.seekToFirst(); index.isValid(); index.next()) {
                    ByteBuffer entry = ByteBuffer.wrap(index.key());
                    long deleted = entry.getLong();
                    // Timestamps are non-negative, so their big-endian bytes sort as the numbers do.
                    if (deleted >= timestamp) {
                        break;
                    }
                    byte[] key = new byte[entry.remaining()];
                    entry.get(key);
                    purges.add(removeIfUnchanged(key, Record.tombstone(deleted)));
                }
                index.status();
            }
            return null;
        });
        return purges.stream().filter(CompletableFuture::join).count();
    }

    // ---- ranges --------------------------------------------------------------------------------

    /**
     * Opens a cursor over {@code start <= key < end} (a null end: to the last key) in ascending
     * unsigned byte order, tombstones included, as of one snapshot. The caller must close it.
     */
    public RangeCursor openRange(byte[] start, byte[] end) {
        return guarded(() -> {
            RangeCursor cursor = new RangeCursor(start, end);
            openCursors.add(cursor);
            return cursor;
        });
    }

    /** A forward scan over one snapshot of the records. */
    public final class RangeCursor implements RecordCursor {

        private final Snapshot snapshot;
        private final Slice upperBound;
        private final ReadOptions readOptions;
        private final RocksIterator iterator;
        private boolean released;

        private RangeCursor(byte[] start, byte[] end) {
            snapshot = db.getSnapshot();
            upperBound = end == null ? null : new Slice(end);
            readOptions = new ReadOptions().setSnapshot(snapshot)
                    // A scan reads each block once: keep it from evicting the point reads' working set.
                    .setFillCache(false);
            if (upperBound != null) {
                readOptions.setIterateUpperBound(upperBound);
            }
            iterator = db.newIterator(records, readOptions);
            iterator.seek(start);
        }

        @Override
        public KeyedRecord next() {
            return guarded(() -> {
                if (released) {
                    throw new StorageException("the range cursor is closed");
                }
                if (!iterator.isValid()) {
                    iterator.status();
                    return null;
                }
                KeyedRecord next = new KeyedRecord(iterator.key(), RecordCodec.decode(iterator.value()));
                iterator.next();
                return next;
            });
        }

        @Override
        public void close() {
            lifecycle.readLock().lock();
            try {
                if (!closed && openCursors.remove(this)) {
                    release();
                }
            } finally {
                lifecycle.readLock().unlock();
            }
        }

        private void release() {
            if (released) {
                return;
            }
            released = true;
            iterator.close();
            readOptions.close();
            if (upperBound != null) {
                upperBound.close();
            }
            db.releaseSnapshot(snapshot);
        }
    }

    // ---- maintenance and figures ---------------------------------------------------------------

    /** Flushes the memtables and compacts everything now. */
    public void compact() {
        guarded(() -> {
            try (FlushOptions flush = new FlushOptions().setWaitForFlush(true)) {
                db.flush(flush, List.of(records, tombstonesByTime, byToken, hints, meta));
            }
            for (ColumnFamilyHandle family : List.of(records, tombstonesByTime, byToken, hints)) {
                db.compactRange(family);
            }
            return null;
        });
    }

    /** A RocksDB property of the records, for metrics. */
    public long longProperty(String name) {
        return guarded(() -> db.getLongProperty(records, name));
    }

    /** Block reads served by the block cache since the store opened, as a share of all block reads. */
    public double blockCacheHitRatio() {
        return guarded(() -> {
            long hits = statistics.getTickerCount(TickerType.BLOCK_CACHE_HIT);
            long misses = statistics.getTickerCount(TickerType.BLOCK_CACHE_MISS);
            return hits + misses == 0 ? Double.NaN : (double) hits / (hits + misses);
        });
    }

    /** Point reads answered from memory (a memtable or the block cache) since the store opened. */
    public long readsFromMemory() {
        return readsFromMemory.sum();
    }

    /** Point reads that memory could not answer since the store opened (they read the disk). */
    public long readsNotInMemory() {
        return readsNotInMemory.sum();
    }

    /** Writes waiting for the writer now. */
    public int pendingWrites() {
        return writes.size();
    }

    /** Bytes of values waiting for the writer, or in the batch it commits, now. */
    public long pendingWriteBytes() {
        return writes.valueBytes();
    }

    /**
     * Lets the writer finish what is queued, then closes open cursors, the column families, the
     * database and last the options they use.
     */
    @Override
    public void close() {
        if (writes != null) {
            writes.close();
        }
        lifecycle.writeLock().lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            openCursors.forEach(RangeCursor::release);
            openCursors.clear();
            records.close();
            tombstonesByTime.close();
            byToken.close();
            hints.close();
            meta.close();
            try {
                db.syncWal();
            } catch (RocksDBException e) {
                // Closing goes on: the WAL was written on every acknowledged write already.
            }
            db.close();
            cachedReads.close();
            writeOptions.close();
            dbOptions.close();
            statistics.close();
            recordOptions.close();
            indexOptions.close();
            bloomFilter.close();
            blockCache.close();
        } finally {
            lifecycle.writeLock().unlock();
        }
    }

    public boolean isOpen() {
        return !closed;
    }

    interface StoreCall<T> {
        T run() throws RocksDBException;
    }

    <T> T guarded(StoreCall<T> call) {
        lifecycle.readLock().lock();
        try {
            if (closed) {
                throw new StorageException("the store is closed");
            }
            return call.run();
        } catch (RocksDBException e) {
            throw new StorageException(e.getMessage(), e);
        } finally {
            lifecycle.readLock().unlock();
        }
    }

    RocksDB db() {
        return db;
    }

    /** Where an earlier version kept its data: moved into {@code records} at the first open. */
    private static final class PreviousLayout {

        /** Two families opened through RocksDB's TtlDB, each value followed by 4 bytes of write time. */
        private static final List<byte[]> NAMES = List.of(
                "live".getBytes(StandardCharsets.UTF_8), "tombstones".getBytes(StandardCharsets.UTF_8));
        private static final int TTL_SUFFIX = 4;
        private static final int BATCH = 10_000;

        static List<byte[]> columnFamilies(List<byte[]> existing) {
            return NAMES.stream().filter(name -> existing.stream().anyMatch(e -> Arrays.equals(e, name))).toList();
        }

        /**
         * Copies every record into the new families, then drops the old ones: a crash before the
         * drop repeats the copy at the next open, which writes the same records again.
         */
        static void migrate(RocksStore store, List<ColumnFamilyHandle> old) throws RocksDBException {
            long moved = 0;
            for (ColumnFamilyHandle family : old) {
                try (RocksIterator iterator = store.db.newIterator(family); Batches batches = new Batches(store.db)) {
                    for (iterator.seekToFirst(); iterator.isValid(); iterator.next()) {
                        byte[] stored = iterator.value();
                        Record record = RecordCodec.decode(Arrays.copyOf(stored, stored.length - TTL_SUFFIX));
                        batches.put(store.records, iterator.key(), record.encoded());
                        batches.put(store.byToken, tokenKey(store.token.applyAsLong(iterator.key()), iterator.key()), version(record));
                        if (record.tombstone()) {
                            batches.put(store.tombstonesByTime, indexKey(record.timestamp(), iterator.key()), NOTHING);
                        }
                        moved++;
                    }
                    iterator.status();
                }
            }
            for (ColumnFamilyHandle family : old) {
                store.db.dropColumnFamily(family);
                family.close();
            }
            log.info("moved {} records from the previous storage layout (live, tombstones) into 'records'", moved);
        }

        /** Builds the token index of a store whose records were written before it existed. */
        static void indexTokens(RocksStore store) throws RocksDBException {
            long indexed = 0;
            try (RocksIterator iterator = store.db.newIterator(store.records); Batches batches = new Batches(store.db)) {
                for (iterator.seekToFirst(); iterator.isValid(); iterator.next()) {
                    Record record = RecordCodec.decode(iterator.value());
                    batches.put(store.byToken, tokenKey(store.token.applyAsLong(iterator.key()), iterator.key()), version(record));
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
}
