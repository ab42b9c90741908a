package io.ringkv.replication;

import java.util.Optional;

import io.ringkv.storage.KeyedRecord;
import io.ringkv.storage.Record;
import io.ringkv.storage.RocksStore;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * This node's store as a {@link Replica}. RocksDB calls block, so each runs on the bounded storage
 * scheduler; a full queue there fails the call at once, which the caller counts as a failed replica.
 */
public final class LocalReplica implements Replica {

    private final String name;
    private final RocksStore store;
    private final Scheduler storageScheduler;

    public LocalReplica(String name, RocksStore store, Scheduler storageScheduler) {
        this.name = name;
        this.store = store;
        this.storageScheduler = storageScheduler;
    }

    @Override
    public String name() {
        return name;
    }

    /** No network: a local read is always the cheapest. */
    @Override
    public double expectedLatencyMillis() {
        return 0;
    }

    @Override
    public Mono<Optional<Record>> read(byte[] key) {
        return Mono.fromCallable(() -> store.get(key)).subscribeOn(storageScheduler);
    }

    @Override
    public Mono<Boolean> write(byte[] key, Record record) {
        return Mono.fromCallable(() -> {
            store.apply(key, record);
            return true;
        }).subscribeOn(storageScheduler);
    }

    /**
     * Pulls records from a RocksDB iterator only as fast as they are requested, so a slow reader
     * slows the scan instead of filling the heap; the iterator is closed on completion, error or cancel.
     */
    @Override
    public Flux<KeyedRecord> scan(byte[] start, byte[] end) {
        return Flux.<KeyedRecord, RocksStore.RangeCursor>generate(
                        () -> store.openRange(start, end),
                        (cursor, sink) -> {
                            KeyedRecord next = cursor.next();
                            if (next == null) {
                                sink.complete();
                            } else {
                                sink.next(next);
                            }
                            return cursor;
                        },
                        RocksStore.RangeCursor::close)
                .subscribeOn(storageScheduler);
    }
}
