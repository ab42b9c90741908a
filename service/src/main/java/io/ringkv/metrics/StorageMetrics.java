package io.ringkv.metrics;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.ringkv.storage.RocksStore;

/** RocksDB's own figures as gauges, read from the store when they are scraped. */
public final class StorageMetrics implements MeterBinder {

    private final RocksStore store;

    public StorageMetrics(RocksStore store) {
        this.store = store;
    }

    @Override
    public void bindTo(MeterRegistry meters) {
        property(meters, "ringkv.storage.keys.estimated", "rocksdb.estimate-num-keys", "Keys stored, tombstones included (estimate)");
        property(meters, "ringkv.storage.sst.live.bytes", "rocksdb.live-sst-files-size", "Bytes in live SST files");
        property(meters, "ringkv.storage.compaction.pending.bytes", "rocksdb.estimate-pending-compaction-bytes",
                "Bytes compaction still has to rewrite (estimate)");
        property(meters, "ringkv.storage.memtable.bytes", "rocksdb.cur-size-all-mem-tables", "Bytes in memtables");
        FunctionCounter.builder("ringkv.storage.reads", store, RocksStore::readsFromMemory)
                .description("Point reads of this node's store, by where they were answered")
                .tag("from", "memory")
                .register(meters);
        FunctionCounter.builder("ringkv.storage.reads", store, RocksStore::readsNotInMemory)
                .description("Point reads of this node's store, by where they were answered")
                .tag("from", "disk")
                .register(meters);
        Gauge.builder("ringkv.storage.writes.queued", store, s -> s.isOpen() ? s.pendingWrites() : Double.NaN)
                .description("Writes waiting for the store's writer")
                .register(meters);
        Gauge.builder("ringkv.storage.writes.queued.bytes", store, s -> s.isOpen() ? s.pendingWriteBytes() : Double.NaN)
                .description("Bytes of values waiting for the store's writer, or in the batch it commits")
                .baseUnit("bytes")
                .register(meters);
        Gauge.builder("ringkv.storage.block.cache.hit.ratio", store, s -> s.isOpen() ? s.blockCacheHitRatio() : Double.NaN)
                .description("Share of block reads served from the block cache since start")
                .register(meters);
    }

    private void property(MeterRegistry meters, String name, String property, String description) {
        Gauge.builder(name, store, s -> s.isOpen() ? s.longProperty(property) : Double.NaN)
                .description(description)
                .baseUnit(name.endsWith(".bytes") ? "bytes" : null)
                .register(meters);
    }
}
