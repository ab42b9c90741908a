package io.ringkv.tombstones;

import java.time.Duration;
import java.util.function.LongSupplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

import io.ringkv.lifecycle.PeriodicTask;
import io.ringkv.storage.RocksStore;
import io.ringkv.storage.TombstoneIndex;

/**
 * Drops tombstones once they are older than the grace period, counted from the delete's own
 * timestamp: until then a replica that missed the delete can still learn of it instead of bringing
 * the value back. Values that expired go the same way, counted from their expiry. Each pass also
 * flushes a store that took no write since the last one ({@link RocksStore#flushIfQuiet}). Runs every {@code every}, on the storage scheduler.
 */
public final class TombstonePurge extends PeriodicTask {

    private static final Logger log = LoggerFactory.getLogger(TombstonePurge.class);

    private final RocksStore store;
    private final TombstoneIndex tombstones;
    private final Scheduler storage;
    private final Duration every;
    private final LongSupplier cutoff;
    private final Counter tombstonesDropped;
    private final Counter expiredDropped;

    /** @param cutoff the timestamp before which a tombstone may go (now minus the grace period) */
    public TombstonePurge(RocksStore store, Scheduler storage, Duration every, LongSupplier cutoff, MeterRegistry meters) {
        this.store = store;
        this.tombstones = new TombstoneIndex(store);
        this.storage = storage;
        this.every = every;
        this.cutoff = cutoff;
        this.tombstonesDropped = Counter.builder("ringkv.tombstones.dropped")
                .description("Tombstones dropped from this node's store, past the grace period").register(meters);
        this.expiredDropped = Counter.builder("ringkv.expired.dropped")
                .description("Values that expired, dropped from this node's store for good past the grace period (their"
                        + " values' bytes went earlier, in compaction; a tombstone of theirs hid older versions meanwhile)")
                .register(meters);
    }

    /** One pass now; blocking. */
    public TombstoneIndex.Purged purge() {
        TombstoneIndex.Purged dropped = tombstones.purgeTombstonesBefore(cutoff.getAsLong());
        tombstonesDropped.increment(dropped.tombstones());
        expiredDropped.increment(dropped.expired());
        if (dropped.total() > 0) {
            log.info("dropped {} tombstones and {} values that expired, past the grace period", dropped.tombstones(), dropped.expired());
        }
        // What was dropped, and values that expired, leave the disk in compaction, which a record
        // still in a memtable never goes through: a store no longer written to flushes here.
        store.flushIfQuiet();
        return dropped;
    }

    @Override
    protected Disposable begin() {
        return everyPeriod(every, storage, () -> Mono.fromCallable(this::purge),
                error -> log.warn("dropping expired tombstones failed this time: {}", error.toString()))
                .subscribe();
    }
}
