package io.ringkv.tombstones;

import java.time.Duration;
import java.util.function.LongSupplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

import io.ringkv.lifecycle.PeriodicTask;
import io.ringkv.storage.RocksStore;
import io.ringkv.storage.TombstoneIndex;

/**
 * Drops tombstones once they are older than the grace period, counted from the delete's own
 * timestamp: until then a replica that missed the delete can still learn of it instead of bringing
 * the value back. Runs every {@code every}, on the storage scheduler.
 */
public final class TombstonePurge extends PeriodicTask {

    private static final Logger log = LoggerFactory.getLogger(TombstonePurge.class);

    private final TombstoneIndex tombstones;
    private final Scheduler storage;
    private final Duration every;
    private final LongSupplier cutoff;

    /** @param cutoff the timestamp before which a tombstone may go (now minus the grace period) */
    public TombstonePurge(RocksStore store, Scheduler storage, Duration every, LongSupplier cutoff) {
        this.tombstones = new TombstoneIndex(store);
        this.storage = storage;
        this.every = every;
        this.cutoff = cutoff;
    }

    /** One pass now; blocking. */
    public long purge() {
        long dropped = tombstones.purgeTombstonesBefore(cutoff.getAsLong());
        if (dropped > 0) {
            log.info("dropped {} tombstones past the grace period", dropped);
        }
        return dropped;
    }

    @Override
    protected Disposable begin() {
        return everyPeriod(every, storage, () -> Mono.fromCallable(this::purge),
                error -> log.warn("dropping expired tombstones failed this time: {}", error.toString()))
                .subscribe();
    }
}
