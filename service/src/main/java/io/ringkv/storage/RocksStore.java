package io.ringkv.storage;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;

import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.BloomFilter;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.CompressionType;
import org.rocksdb.DBOptions;
import org.rocksdb.FlushOptions;
import org.rocksdb.LRUCache;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.Slice;
import org.rocksdb.Snapshot;
import org.rocksdb.Statistics;
import org.rocksdb.StatsLevel;
import org.rocksdb.TickerType;
import org.rocksdb.TtlDB;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;

/**
 * Owns the RocksDB instance of a node: its options, its two column families and closing them all
 * in the right order. Every method here blocks (RocksDB is a native, synchronous library), so
 * callers run them on the storage scheduler, never on an event-loop thread.
 *
 * <p>Layout: a key lives in exactly one of two column families, {@code live} (values) or
 * {@code tombstones}, and its record there is {@link RecordCodec}-encoded. The two are opened
 * through {@link TtlDB} so that RocksDB's own TTL compaction filter drops tombstones once the
 * grace period has passed (live values never expire). Purging during compaction costs no extra
 * reads, and a replica that was down for less than the grace period still learns of the delete
 * instead of resurrecting the value.
 *
 * <p>Writes keep the newest version only, by the version order given at open: a replica that
 * receives an older write than it holds (reordered or retried) leaves its record alone.
 */
public final class RocksStore implements AutoCloseable {

    private static final byte[] LIVE = "live".getBytes(StandardCharsets.UTF_8);
    private static final byte[] TOMBSTONES = "tombstones".getBytes(StandardCharsets.UTF_8);
    private static final int NEVER_EXPIRE = 0;
    private static final int LOCK_STRIPES = 1024;

    static {
        RocksDB.loadLibrary();
    }

    private final Comparator<Record> versionOrder;
    private final LRUCache blockCache;
    private final BloomFilter bloomFilter;
    private final ColumnFamilyOptions liveOptions;
    private final ColumnFamilyOptions tombstoneOptions;
    private final DBOptions dbOptions;
    private final Statistics statistics;
    private final WriteOptions writeOptions;
    private final TtlDB db;
    private final ColumnFamilyHandle live;
    private final ColumnFamilyHandle tombstones;

    /** A read-modify-write of one key must not interleave with another on the same key. */
    private final Lock[] keyLocks = new Lock[LOCK_STRIPES];
    /** Operations hold it shared; {@link #close()} takes it exclusively, so no native call outlives the handle. */
    private final ReentrantReadWriteLock lifecycle = new ReentrantReadWriteLock();
    private final Set<RangeCursor> openCursors = ConcurrentHashMap.newKeySet();
    private boolean closed;

    private RocksStore(StorageSettings settings, Comparator<Record> versionOrder) throws RocksDBException {
        this.versionOrder = versionOrder;
        for (int i = 0; i < keyLocks.length; i++) {
            keyLocks[i] = new ReentrantLock();
        }
        // Off-heap and shared by both column families: the JVM heap (-Xmx256m) does not hold it,
        // so it is sized against the container's memory beside the heap.
        blockCache = new LRUCache(settings.blockCacheBytes());
        // 10 bits a key gives about 1% false positives: most GETs of an absent key
        // (and the tombstone look-up of every live key) then skip the disk.
        bloomFilter = new BloomFilter(10);
        BlockBasedTableConfig table = new BlockBasedTableConfig()
                .setBlockCache(blockCache)
                .setFilterPolicy(bloomFilter)
                // Index and filter blocks count against the cache instead of growing without bound.
                .setCacheIndexAndFilterBlocks(true)
                .setPinL0FilterAndIndexBlocksInCache(true)
                // Keys are read whole, never by prefix.
                .setWholeKeyFiltering(true);

        liveOptions = new ColumnFamilyOptions()
                .setTableFormatConfig(table)
                // LZ4 on the upper levels is nearly free in CPU; ZSTD on the bottom level,
                // which holds about 90% of the data, saves disk at a cost paid only by compaction.
                .setCompressionType(CompressionType.LZ4_COMPRESSION)
                .setBottommostCompressionType(CompressionType.ZSTD_COMPRESSION)
                // Two 16 MiB memtables keep the write path's native memory small and predictable.
                .setWriteBufferSize(16L * 1024 * 1024)
                .setMaxWriteBufferNumber(2)
                .setLevelCompactionDynamicLevelBytes(true);
        tombstoneOptions = new ColumnFamilyOptions(liveOptions)
                .setTableFormatConfig(table)
                // Without write traffic a file is never compacted, and its expired tombstones never
                // dropped: compact every file at least once per grace period.
                .setPeriodicCompactionSeconds(graceSeconds(settings));

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

        List<ColumnFamilyDescriptor> descriptors = List.of(
                new ColumnFamilyDescriptor(RocksDB.DEFAULT_COLUMN_FAMILY, liveOptions),
                new ColumnFamilyDescriptor(LIVE, liveOptions),
                new ColumnFamilyDescriptor(TOMBSTONES, tombstoneOptions));
        List<ColumnFamilyHandle> handles = new ArrayList<>();
        db = TtlDB.open(dbOptions, settings.directory().toString(), descriptors, handles,
                List.of(NEVER_EXPIRE, NEVER_EXPIRE, graceSeconds(settings)), false);
        // The default family exists because RocksDB requires it; nothing is stored there.
        handles.get(0).close();
        live = handles.get(1);
        tombstones = handles.get(2);
    }

    public static RocksStore open(StorageSettings settings, Comparator<Record> versionOrder) {
        try {
            Files.createDirectories(settings.directory());
            return new RocksStore(settings, versionOrder);
        } catch (RocksDBException | java.io.IOException e) {
            throw new StorageException("cannot open the store in " + settings.directory() + ": " + e.getMessage(), e);
        }
    }

    private static int graceSeconds(StorageSettings settings) {
        return (int) Math.max(1, Math.min(Integer.MAX_VALUE, settings.tombstoneGracePeriod().toSeconds()));
    }

    /** The newest record this replica holds for the key, tombstones included. */
    public Optional<Record> get(byte[] key) {
        return guarded(() -> {
            Lock lock = lockFor(key);
            lock.lock();
            try {
                return Optional.ofNullable(read(key));
            } finally {
                lock.unlock();
            }
        });
    }

    /**
     * Stores the record unless this replica already holds a version that is at least as new.
     *
     * @return whether the record was written
     */
    public boolean apply(byte[] key, Record record) {
        return guarded(() -> {
            Lock lock = lockFor(key);
            lock.lock();
            try {
                Record current = read(key);
                if (current != null && versionOrder.compare(record, current) <= 0) {
                    return false;
                }
                try (WriteBatch batch = new WriteBatch()) {
                    ColumnFamilyHandle target = record.tombstone() ? tombstones : live;
                    ColumnFamilyHandle other = record.tombstone() ? live : tombstones;
                    batch.put(target, key, RecordCodec.encode(record));
                    if (current != null && current.tombstone() != record.tombstone()) {
                        batch.delete(other, key);
                    }
                    db.write(writeOptions, batch);
                }
                return true;
            } finally {
                lock.unlock();
            }
        });
    }

    private Record read(byte[] key) throws RocksDBException {
        byte[] bytes = db.get(live, key);
        if (bytes == null) {
            bytes = db.get(tombstones, key);
        }
        return bytes == null ? null : RecordCodec.decode(bytes);
    }

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

    /** Compacts everything now; expired tombstones are dropped on the way. */
    public void compact() {
        guarded(() -> {
            try (FlushOptions flush = new FlushOptions().setWaitForFlush(true)) {
                db.flush(flush, List.of(live, tombstones));
            }
            db.compactRange(live);
            db.compactRange(tombstones);
            return null;
        });
    }

    /** A RocksDB property of the live and tombstone families summed, for metrics. */
    public long longProperty(String name) {
        return guarded(() -> db.getLongProperty(live, name) + db.getLongProperty(tombstones, name));
    }

    /** Block reads served by the block cache since the store opened, as a share of all block reads. */
    public double blockCacheHitRatio() {
        return guarded(() -> {
            long hits = statistics.getTickerCount(TickerType.BLOCK_CACHE_HIT);
            long misses = statistics.getTickerCount(TickerType.BLOCK_CACHE_MISS);
            return hits + misses == 0 ? Double.NaN : (double) hits / (hits + misses);
        });
    }

    /** Closes open cursors, then the column families, the database and last the options they use. */
    @Override
    public void close() {
        lifecycle.writeLock().lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            openCursors.forEach(RangeCursor::release);
            openCursors.clear();
            live.close();
            tombstones.close();
            try {
                db.syncWal();
            } catch (RocksDBException e) {
                // Closing goes on: the WAL was written on every acknowledged write already.
            }
            db.close();
            writeOptions.close();
            dbOptions.close();
            statistics.close();
            liveOptions.close();
            tombstoneOptions.close();
            bloomFilter.close();
            blockCache.close();
        } finally {
            lifecycle.writeLock().unlock();
        }
    }

    public boolean isOpen() {
        lifecycle.readLock().lock();
        try {
            return !closed;
        } finally {
            lifecycle.readLock().unlock();
        }
    }

    private Lock lockFor(byte[] key) {
        return keyLocks[(Arrays.hashCode(key) & Integer.MAX_VALUE) % LOCK_STRIPES];
    }

    private interface StoreCall<T> {
        T run() throws RocksDBException;
    }

    private <T> T guarded(StoreCall<T> call) {
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

    /**
     * A forward scan over both column families of one snapshot, merged by key. A key is in one of
     * them at a time, so the merge never sees it twice.
     */
    public final class RangeCursor implements RecordCursor {

        private final Snapshot snapshot;
        private final Slice upperBound;
        private final ReadOptions readOptions;
        private final RocksIterator liveIterator;
        private final RocksIterator tombstoneIterator;
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
            liveIterator = db.newIterator(live, readOptions);
            tombstoneIterator = db.newIterator(tombstones, readOptions);
            liveIterator.seek(start);
            tombstoneIterator.seek(start);
        }

        @Override
        public KeyedRecord next() {
            return guarded(() -> {
                if (released) {
                    throw new StorageException("the range cursor is closed");
                }
                boolean hasLive = liveIterator.isValid();
                boolean hasTombstone = tombstoneIterator.isValid();
                if (!hasLive && !hasTombstone) {
                    liveIterator.status();
                    tombstoneIterator.status();
                    return null;
                }
                RocksIterator source;
                if (!hasTombstone) {
                    source = liveIterator;
                } else if (!hasLive) {
                    source = tombstoneIterator;
                } else {
                    source = Arrays.compareUnsigned(liveIterator.key(), tombstoneIterator.key()) <= 0
                            ? liveIterator : tombstoneIterator;
                }
                KeyedRecord next = new KeyedRecord(source.key(), RecordCodec.decode(source.value()));
                source.next();
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
            liveIterator.close();
            tombstoneIterator.close();
            readOptions.close();
            if (upperBound != null) {
                upperBound.close();
            }
            db.releaseSnapshot(snapshot);
        }
    }
}
