package io.ringkv.storage;

import java.nio.file.Path;
import java.time.Duration;

/**
 * What {@link RocksStore} needs to open, free of Spring so that the store is tested on its own.
 *
 * @param directory             where RocksDB keeps its files
 * @param tombstoneGracePeriod  how long a tombstone outlives its delete before compaction may drop it
 * @param blockCacheBytes       the shared LRU cache for uncompressed data, index and filter blocks
 * @param syncWrites            fsync the write-ahead log before acknowledging a write
 */
public record StorageSettings(Path directory, Duration tombstoneGracePeriod, long blockCacheBytes, boolean syncWrites) {
}
