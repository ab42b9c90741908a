package io.ringkv.storage;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.ringkv.record.LastWriteWins;
import io.ringkv.ring.HashRing;
import io.ringkv.settings.InvalidSettingException;
import io.ringkv.settings.RingkvProperties;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The store and the threads that may wait for its disk. Spring destroys a bean before the beans
 * it was built from, so everything that uses the store closes before it does.
 */
@Configuration(proxyBeanMethods = false)
public class StorageConfiguration {

    @Bean(destroyMethod = "close")
    RocksStore rocksStore(RingkvProperties properties) {
        var storage = properties.storage();
        if (storage.memorySize().compareTo(RingkvProperties.Storage.MIN_MEMORY_SIZE) < 0) {
            throw new InvalidSettingException(RingkvProperties.Storage.MEMORY_SIZE,
                    "must be at least " + RingkvProperties.Storage.MIN_MEMORY_SIZE.toMegabytes() + "MB, got " + storage.memorySize());
        }
        try {
            return RocksStore.open(new StorageSettings(properties.dataDir(), storage.memorySize().toBytes(),
                    storage.syncWrites(), storage.queueSize(), storage.queueBytes().toBytes(), storage.maxWalSize().toBytes(),
                    HashRing::token, storage.expiredCompactionInterval().toSeconds()), LastWriteWins.ORDER);
        } catch (StorageException e) {
            // Most often another node already runs on the same directory (RocksDB's LOCK file).
            throw new InvalidSettingException(RingkvProperties.DATA_DIR, e.getMessage());
        }
    }

    /**
     * Runs the storage calls that may wait for the disk (reads the cache cannot answer, ranges).
     * Its queues are per thread, so each gets its share of queue-size. Takes the store as a
     * parameter only so that it is disposed before the store closes.
     */
    @Bean(destroyMethod = "dispose")
    Scheduler storageScheduler(RingkvProperties properties, RocksStore store) {
        var storage = properties.storage();
        return Schedulers.newBoundedElastic(storage.threads(), Math.max(1, storage.queueSize() / storage.threads()),
                "ringkv-storage");
    }
}
