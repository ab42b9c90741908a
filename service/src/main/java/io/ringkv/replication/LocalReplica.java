package io.ringkv.replication;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.BiConsumer;

import io.netty.util.concurrent.EventExecutor;
import io.netty.util.internal.ThreadExecutorMap;
import io.ringkv.record.KeyedRecord;
import io.ringkv.record.Record;
import io.ringkv.record.RecordBatch;
import io.ringkv.storage.RangeCursor;
import io.ringkv.storage.RocksStore;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * This node's store as a {@link Replica}. Reads that need the disk, and scans, run on the bounded
 * storage scheduler; writes go to the store's writer. A full queue fails the call at once, which
 * the caller counts as a failed replica.
 */
public final class LocalReplica implements Replica {

    /** A local scan's batch: what one storage-thread hop reads ahead. */
    private static final int SCAN_BATCH_BYTES = 64 * 1024;
    private static final int SCAN_BATCH_RECORDS = 256;

    private final String name;
    private final RocksStore store;
    private final Scheduler storageScheduler;
    private final ReplicaWindow window;

    /** @param window bounds the calls in flight to this store: the writes of a coordinator answered by faster peers too */
    public LocalReplica(String name, RocksStore store, Scheduler storageScheduler, ReplicaWindow window) {
        this.name = name;
        this.store = store;
        this.storageScheduler = storageScheduler;
        this.window = window;
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
    public ReplicaWindow window() {
        return window;
    }

    /**
     * Answered on the spot when the record is in memory (a memtable or the block cache), which is
     * most reads of a working set that fits the cache; otherwise read on the storage scheduler.
     */
    @Override
    public Mono<Optional<Record>> read(byte[] key) {
        return Mono.defer(() -> {
            RocksStore.Lookup cached = readFromMemory(key);
            return cached.known()
                    ? Mono.just(cached.found())
                    : Mono.fromCallable(() -> store.get(key)).subscribeOn(storageScheduler);
        });
    }

    /** The record if it is in memory (a memtable or the block cache), else not {@link RocksStore.Lookup#known()}: never blocks. */
    public RocksStore.Lookup readFromMemory(byte[] key) {
        return store.getIfCached(key);
    }

    /**
     * Queued for the store's writer; the answer comes back on the caller's event loop, so that
     * what follows (the quorum, the response) does not run on the writer thread.
     */
    @Override
    public Mono<Boolean> write(byte[] key, Record record) {
        return Mono.create(sink -> {
            EventExecutor caller = ThreadExecutorMap.currentExecutor();
            BiConsumer<Boolean, Throwable> answer = (changed, error) -> {
                if (error != null) {
                    sink.error(error instanceof CompletionException && error.getCause() != null ? error.getCause() : error);
                } else {
                    sink.success(true);
                }
            };
            CompletableFuture<Boolean> stored = store.apply(key, record);
            if (caller == null) {
                stored.whenComplete(answer);
            } else {
                stored.whenCompleteAsync(answer, caller);
            }
        });
    }

    /**
     * This node's records of the first of the keys, as many as one batch takes: one storage-thread
     * hop. Background work (repair, data movement): it yields to clients in the window.
     */
    public Mono<RecordBatch> readBatch(List<byte[]> keys) {
        return window.call(0, ReplicaWindow.Lane.BACKGROUND,
                () -> Mono.fromCallable(() -> RecordBatch.read(keys, store::get)).subscribeOn(storageScheduler));
    }

    /**
     * Hands every record to the store's writer at once, so that they share its batches; completes
     * once all are stored. Background work, like {@link #readBatch}.
     */
    @Override
    public Mono<Void> writeBatch(List<KeyedRecord> records) {
        return window.call(RecordBatch.valueBytes(records), ReplicaWindow.Lane.BACKGROUND, () -> {
            CompletableFuture<?>[] stored = new CompletableFuture<?>[records.size()];
            for (int i = 0; i < stored.length; i++) {
                stored[i] = store.apply(records.get(i).key(), records.get(i).record());
            }
            return Mono.fromFuture(CompletableFuture.allOf(stored)).then();
        });
    }

    /**
     * Pulls records from a RocksDB iterator only as fast as they are requested, so a slow reader
     * slows the scan instead of filling the heap; the iterator is closed on completion, error or
     * cancel. Read in batches of up to {@value #SCAN_BATCH_BYTES} bytes (or one larger record), one
     * storage-thread hop per batch rather than per record, and at most two batches held.
     */
    @Override
    public Flux<KeyedRecord> scan(byte[] start, byte[] end) {
        return Flux.<List<KeyedRecord>, RangeCursor>generate(
                        () -> store.openRange(start, end),
                        (cursor, sink) -> {
                            List<KeyedRecord> batch = nextBatch(cursor);
                            if (batch.isEmpty()) {
                                sink.complete();
                            } else {
                                sink.next(batch);
                            }
                            return cursor;
                        },
                        this::closeOffTheEventLoop)
                .subscribeOn(storageScheduler)
                .concatMapIterable(batch -> batch, 1);
    }

    private static List<KeyedRecord> nextBatch(RangeCursor cursor) {
        List<KeyedRecord> batch = new ArrayList<>();
        long bytes = 0;
        while (bytes < SCAN_BATCH_BYTES && batch.size() < SCAN_BATCH_RECORDS) {
            KeyedRecord next = cursor.next();
            if (next == null) {
                break;
            }
            batch.add(next);
            bytes += next.key().length + next.record().valueLength();
        }
        return batch;
    }

    /** A cancel comes on the canceller's thread, often an event loop: the cursor is closed on storage. */
    private void closeOffTheEventLoop(RangeCursor cursor) {
        try {
            storageScheduler.schedule(cursor::close);
        } catch (RejectedExecutionException full) {
            // No room on the storage threads: closing now beats leaking the iterator and snapshot.
            cursor.close();
        }
    }
}
