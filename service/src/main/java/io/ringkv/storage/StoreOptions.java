package io.ringkv.storage;

import java.util.concurrent.ThreadLocalRandom;

import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.BloomFilter;
import org.rocksdb.Cache;
import org.rocksdb.CassandraCompactionFilter;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.CompressionType;
import org.rocksdb.DBOptions;
import org.rocksdb.HyperClockCache;
import org.rocksdb.IndexType;
import org.rocksdb.ReadOptions;
import org.rocksdb.ReadTier;
import org.rocksdb.Statistics;
import org.rocksdb.StatsLevel;
import org.rocksdb.TickerType;
import org.rocksdb.WriteBufferManager;
import org.rocksdb.WriteOptions;

/**
 * How {@link RocksStore} configures RocksDB, each option with why: the native objects the
 * database, its column families and its reads and writes use. They must outlive the database, so
 * the store closes them last ({@link #close}).
 */
final class StoreOptions implements AutoCloseable {

    private static final long MIB = 1024 * 1024;
    private static final long MIN_WRITE_BUFFER = 4 * MIB;
    private static final long MAX_WRITE_BUFFER = 64 * MIB;
    /** The smallest share of the full size a node's record memtables may draw ({@link #recordWriteBuffer}). */
    private static final double MIN_WRITE_BUFFER_SHARE = 0.6;

    private final Cache blockCache;
    private final WriteBufferManager writeBufferManager;
    private final BloomFilter bloomFilter;
    private final ColumnFamilyOptions recordOptions;
    private final CassandraCompactionFilter expiredValues;
    private final ColumnFamilyOptions expiringOptions;
    private final ColumnFamilyOptions indexOptions;
    private final Statistics statistics;
    private final DBOptions dbOptions;
    private final WriteOptions writeOptions;
    private final ReadOptions cachedReads;

    StoreOptions(StorageSettings settings) {
        long memory = settings.memoryBytes();
        // One budget for all of RocksDB's memory (ringkv.storage.memory-size, which the chart derives
        // from the pod's memory limit): off the JVM heap, beside it in the container's limit.
        // HyperClockCache looks up without locks, which lets event loops read from it (getIfCached).
        blockCache = new HyperClockCache(memory, 0, -1, false);
        // Memtables are charged to that cache, so that blocks and memtables share the budget
        // instead of adding up; past a quarter of it (at least two of the smallest memtables) the
        // largest memtable is flushed. No stall: the write queue's byte bound holds writers back.
        writeBufferManager = new WriteBufferManager(Math.max(memory / 4, 2 * MIN_WRITE_BUFFER), blockCache, false);
        // 10 bits a key gives about 1% false positives: most GETs of an absent key, and the read
        // of the stored version that every write makes, skip the disk.
        bloomFilter = new BloomFilter(10);
        BlockBasedTableConfig table = new BlockBasedTableConfig()
                .setBlockCache(blockCache)
                .setFilterPolicy(bloomFilter)
                // Index and filter blocks count against the cache instead of growing with the data:
                // at 10 M records they are tens of MiB a node, more than a small budget.
                .setCacheIndexAndFilterBlocks(true)
                .setCacheIndexAndFilterBlocksWithHighPriority(true)
                // Partitioned, so that only the parts in use take cache: the top level of each
                // file's index and filter (a few KiB) stays pinned, the 4 KiB partitions come and go.
                .setIndexType(IndexType.kTwoLevelIndexSearch)
                .setPartitionFilters(true)
                .setMetadataBlockSize(4096)
                .setPinTopLevelIndexAndFilter(true)
                .setPinL0FilterAndIndexBlocksInCache(true)
                // Keys are read whole, never by prefix.
                .setWholeKeyFiltering(true);

        // RocksDB's LOG names the size drawn (Options.write_buffer_size).
        long recordWriteBuffer = recordWriteBuffer(memory, ThreadLocalRandom.current().nextDouble());
        recordOptions = new ColumnFamilyOptions()
                .setTableFormatConfig(table)
                // LZ4 on the upper levels is nearly free in CPU; ZSTD on the bottom level, which
                // holds about 90% of the data, saves disk at a cost paid only by compaction. A block
                // that does not shrink by an eighth (random or already compressed values) is kept
                // uncompressed (RocksDB's default ratio check), so its reads decompress nothing.
                .setCompressionType(CompressionType.LZ4_COMPRESSION)
                .setBottommostCompressionType(CompressionType.ZSTD_COMPRESSION)
                // Two memtables of up to an eighth of the budget each: larger ones mean fewer,
                // larger flushes and less compaction under a bulk load. Each node draws its own
                // size below that (recordWriteBuffer), so that replicas do not flush and compact
                // at the same moments.
                .setWriteBufferSize(recordWriteBuffer)
                .setMaxWriteBufferNumber(2)
                .setLevelCompactionDynamicLevelBytes(true);
        // Records that expire, as rows RocksDB's Cassandra filter reads (ExpiringRows): compaction
        // drops an expired value (purge on expiration, no grace: the row's tombstone column stays,
        // and waits for repair as every tombstone does). Otherwise laid out as the records.
        expiredValues = new CassandraCompactionFilter(true, 0);
        expiringOptions = new ColumnFamilyOptions(recordOptions)
                .setCompactionFilter(expiredValues)
                // Files no write has made compact are compacted once they are this old, so that
                // space comes back from values that expired in a store no longer written to.
                .setPeriodicCompactionSeconds(settings.expiredCompactionSeconds());
        // The index holds keys only: small memtables are plenty.
        indexOptions = new ColumnFamilyOptions()
                .setTableFormatConfig(table)
                .setCompressionType(CompressionType.LZ4_COMPRESSION)
                .setWriteBufferSize(MIN_WRITE_BUFFER)
                .setMaxWriteBufferNumber(2)
                .setLevelCompactionDynamicLevelBytes(true);

        // Without the detailed timers (the costly part) statistics are cheap enough to leave on; their
        // block-cache tickers tell whether memory-size fits the working set.
        statistics = new Statistics();
        statistics.setStatsLevel(StatsLevel.EXCEPT_DETAILED_TIMERS);
        dbOptions = new DBOptions()
                .setStatistics(statistics)
                .setWriteBufferManager(writeBufferManager)
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
    }

    /**
     * The records' memtable size: an eighth of the memory budget (4-64 MiB), times a share drawn
     * once per process between {@value #MIN_WRITE_BUFFER_SHARE} and 1. Replicas receive the same
     * writes: with memtables of one size they flushed within 30 ms of each other, and at every
     * fourth flush all compacted at once, so that no quorum could avoid a compacting replica. On
     * three nodes sharing two cores, the requests on every node then waited 0.1-0.5 s, for up to
     * seconds (loadtest/BENCHMARKS.md). With sizes apart the same writes fill them at different
     * moments. Never above the full size: the write buffer manager's quarter of the budget holds two.
     *
     * @param draw uniform in [0, 1)
     */
    static long recordWriteBuffer(long memory, double draw) {
        long full = Math.clamp(memory / 8, MIN_WRITE_BUFFER, MAX_WRITE_BUFFER);
        return Math.max(MIN_WRITE_BUFFER, (long) (full * (MIN_WRITE_BUFFER_SHARE + (1 - MIN_WRITE_BUFFER_SHARE) * draw)));
    }

    /** For the records themselves, the large and most read family. */
    ColumnFamilyOptions records() {
        return recordOptions;
    }

    /** For the records that expire: as {@link #records()}, and compaction drops their expired values. */
    ColumnFamilyOptions expiring() {
        return expiringOptions;
    }

    /** For the indexes and the small families: keys, or small values. */
    ColumnFamilyOptions indexes() {
        return indexOptions;
    }

    DBOptions database() {
        return dbOptions;
    }

    WriteOptions writes() {
        return writeOptions;
    }

    /** Reads that may not touch the disk. */
    ReadOptions cachedReads() {
        return cachedReads;
    }

    /** Block reads served by the block cache since the store opened, as a share of all block reads. */
    double blockCacheHitRatio() {
        long hits = statistics.getTickerCount(TickerType.BLOCK_CACHE_HIT);
        long misses = statistics.getTickerCount(TickerType.BLOCK_CACHE_MISS);
        return hits + misses == 0 ? Double.NaN : (double) hits / (hits + misses);
    }

    /** Once the database is closed: each object after those that use it. */
    @Override
    public void close() {
        cachedReads.close();
        writeOptions.close();
        dbOptions.close();
        writeBufferManager.close();
        statistics.close();
        recordOptions.close();
        expiringOptions.close();
        expiredValues.close();
        indexOptions.close();
        bloomFilter.close();
        blockCache.close();
    }
}
