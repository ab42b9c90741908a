package io.ringkv.storage;

import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.BloomFilter;
import org.rocksdb.Cache;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.CompressionType;
import org.rocksdb.DBOptions;
import org.rocksdb.HyperClockCache;
import org.rocksdb.ReadOptions;
import org.rocksdb.ReadTier;
import org.rocksdb.Statistics;
import org.rocksdb.StatsLevel;
import org.rocksdb.TickerType;
import org.rocksdb.WriteOptions;

/**
 * How {@link RocksStore} configures RocksDB, each option with why: the native objects the
 * database, its column families and its reads and writes use. They must outlive the database, so
 * the store closes them last ({@link #close}).
 */
final class StoreOptions implements AutoCloseable {

    private final Cache blockCache;
    private final BloomFilter bloomFilter;
    private final ColumnFamilyOptions recordOptions;
    private final ColumnFamilyOptions indexOptions;
    private final Statistics statistics;
    private final DBOptions dbOptions;
    private final WriteOptions writeOptions;
    private final ReadOptions cachedReads;

    StoreOptions(StorageSettings settings) {
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
    }

    /** For the records themselves, the large and most read family. */
    ColumnFamilyOptions records() {
        return recordOptions;
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
        statistics.close();
        recordOptions.close();
        indexOptions.close();
        bloomFilter.close();
        blockCache.close();
    }
}
