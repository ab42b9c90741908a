package io.ringkv.storage;

import java.nio.file.Path;
import java.util.function.ToLongFunction;

/**
 * What {@link RocksStore} needs to open, free of Spring so that the store is tested on its own.
 *
 * @param directory             where RocksDB keeps its files
 * @param memoryBytes           RocksDB's memory: the block cache that data, index and filter blocks and
 *                              the memtables share
 * @param syncWrites            fsync the write-ahead log before acknowledging a write
 * @param writeQueueSize        writes that may wait for the writer; more are refused at once
 * @param writeQueueBytes       bytes of values that may wait for the writer (or be committing); more are refused at once
 * @param maxWalBytes           the write-ahead log's size on disk, about: past it the column families that keep its
 *                              oldest file alive are flushed
 * @param token                 a key's position on the hash ring, by which the token index orders keys
 * @param expiredCompactionSeconds the age at which a file of expiring records is compacted even if no
 *                              write made it, so that the space of expired values comes back
 */
public record StorageSettings(Path directory, long memoryBytes, boolean syncWrites, int writeQueueSize,
        long writeQueueBytes, long maxWalBytes, ToLongFunction<byte[]> token, long expiredCompactionSeconds) {
}
