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
import org.rocksdb.Status;
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
 * <p>Layout: {@code records} holds each key's newest version, a value or a tombstone
 * ({@link RecordCodec}), so a read is one look-up. {@code tombstones-by-time} indexes the
 * tombstones by their timestamp, written in the same batch, so that those past the grace period
 * are found without scanning the data ({@link #purgeTombstonesBefore}).
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
    private static final int TIMESTAMP_BYTES = 8;

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
    private final WriteQueue writes;

    /** Operations hold it shared; {@link #close()} takes it exclusively, so no native call outlives the handle. */
    private final ReentrantReadWriteLock lifecycle = new ReentrantReadWriteLock();
    private final Set<RangeCursor> openCursors = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;
    /** Point reads answered from memory by getIfCached, and those that had to go to get. */
    private final LongAdder readsFromMemory = new LongAdder();
    private final LongAdder readsNotInMemory = new LongAdder();

    private RocksStore(StorageSettings settings, Comparator<Record> versionOrder) throws RocksDBException {
        this.versionOrder = versionOrder;
        // Off-heap and shared by both column families: the JVM heap (-Xmx256m) does not hold it,
        // so it is sized against the container's memory beside the heap. HyperClockCache looks up
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
                .setKeepLogFileNum(5);

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
        List<byte[]> previousLayout = PreviousLayout.columnFamilies(existing);
        previousLayout.forEach(name -> descriptors.add(new ColumnFamilyDescriptor(name, recordOptions)));
        List<ColumnFamilyHandle> handles = new ArrayList<>();
        db = RocksDB.open(dbOptions, directory.toString(), descriptors, handles);
        // The default family exists because RocksDB requires it; nothing is stored there.
        handles.get(0).close();
        records = handles.get(1);
        tombstonesByTime = handles.get(2);
        if (!previousLayout.isEmpty()) {
            PreviousLayout.migrate(this, handles.subList(3, handles.size()));
        }
        writes = new WriteQueue(this, settings.writeQueueSize());
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
            byte[] bytes = db.get(records, cachedReads, key);
            readsFromMemory.increment();
            return bytes == null ? Lookup.ABSENT : new Lookup(true, RecordCodec.decode(bytes));
        } catch (RocksDBException e) {
            if (e.getStatus() != null && e.getStatus().getCode() == Status.Code.Incomplete) {
                readsNotInMemory.increment();
                return Lookup.NOT_CACHED;
            }
            throw new StorageException(e.getMessage(), e);
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
     *         fails with {@link StorageOverloadedException} at once when too many writes wait
     */
    public CompletableFuture<Boolean> apply(byte[] key, Record record) {
        return writes.submit(new WriteQueue.Write(key, record, false));
    }

    /**
     * Removes the key's record if it is still exactly this tombstone (a newer write may have
     * replaced it meanwhile); through the writer, like every change.
     */
    CompletableFuture<Boolean> purge(byte[] key, Record tombstone) {
        return writes.submit(new WriteQueue.Write(key, tombstone, true));
    }

    /**
     * Called by the writer thread alone: applies a batch of writes in order, each against what
     * the store and the earlier writes of the batch hold, in one atomic RocksDB write.
     *
     * @return for each write, whether it changed the store
     */
    boolean[] commit(List<WriteQueue.Write> batch) {
        return guarded(() -> {
            boolean[] changed = new boolean[batch.size()];
            Map<ByteBuffer, Record> pending = new HashMap<>();
            try (WriteBatch rocks = new WriteBatch()) {
                for (int i = 0; i < batch.size(); i++) {
                    WriteQueue.Write write = batch.get(i);
                    ByteBuffer id = ByteBuffer.wrap(write.key());
                    Record current = pending.containsKey(id) ? pending.get(id) : decode(db.get(records, write.key()));
                    Record next = write.purge() ? purged(current, write.record()) : newer(current, write.record());
                    if (next == current) {
                        continue;
                    }
                    changed[i] = true;
                    pending.put(id, next);
                    if (current != null && current.tombstone()) {
                        rocks.delete(tombstonesByTime, indexKey(current.timestamp(), write.key()));
                    }
                    if (next == null) {
                        rocks.delete(records, write.key());
                    } else {
                        rocks.put(records, write.key(), RecordCodec.encode(next));
                        if (next.tombstone()) {
                            rocks.put(tombstonesByTime, indexKey(next.timestamp(), write.key()), new byte[0]);
                        }
                    }
                }
                if (rocks.count() > 0) {
                    db.write(writeOptions, rocks);
                }
            }
            return changed;
        });
    }

    /** The record to keep: the incoming one if it is newer, else the current one (the same object). */
    private Record newer(Record current, Record incoming) {
        return current == null || versionOrder.compare(incoming, current) > 0 ? incoming : current;
    }

    private static Record purged(Record current, Record tombstone) {
        return tombstone.equals(current) ? null : current;
    }

    private static byte[] indexKey(long timestamp, byte[] key) {
        return ByteBuffer.allocate(TIMESTAMP_BYTES + key.length).putLong(timestamp).put(key).array();
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
                    purges.add(purge(key, Record.tombstone(deleted)));
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
                db.flush(flush, List.of(records, tombstonesByTime));
            }
            db.compactRange(records);
            db.compactRange(tombstonesByTime);
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
                try (RocksIterator iterator = store.db.newIterator(family);
                        WriteOptions options = new WriteOptions().setSync(true)) {
                    WriteBatch batch = new WriteBatch();
                    for (iterator.seekToFirst(); iterator.isValid(); iterator.next()) {
                        byte[] stored = iterator.value();
                        Record record = RecordCodec.decode(Arrays.copyOf(stored, stored.length - TTL_SUFFIX));
                        batch.put(store.records, iterator.key(), RecordCodec.encode(record));
                        if (record.tombstone()) {
                            batch.put(store.tombstonesByTime, indexKey(record.timestamp(), iterator.key()), new byte[0]);
                        }
                        moved++;
                        if (batch.count() >= BATCH) {
                            store.db.write(options, batch);
                            batch.close();
                            batch = new WriteBatch();
                        }
                    }
                    iterator.status();
                    store.db.write(options, batch);
                    batch.close();
                }
            }
            for (ColumnFamilyHandle family : old) {
                store.db.dropColumnFamily(family);
                family.close();
            }
            log.info("moved {} records from the previous storage layout (live, tombstones) into 'records'", moved);
        }
    }
}
