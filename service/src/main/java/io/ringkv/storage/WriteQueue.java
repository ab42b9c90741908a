package io.ringkv.storage;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The store's one writer: a thread that takes every write waiting and commits them as one batch
 * ({@link RocksStore#commit}). Writes are queued from any thread without a lock (event loops
 * among them) and the writer is woken only when it sleeps. Under load a batch holds many writes:
 * one write-ahead-log append, and one fsync with synchronous writes, for all of them.
 */
final class WriteQueue implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(WriteQueue.class);

    /** The most writes one batch takes, so that the first of them is not kept waiting long. */
    private static final int MAX_BATCH = 1024;

    /** What a change does. */
    enum Kind {
        /** Store the record unless a newer one is held. */
        RECORD,
        /** Drop the key's record if it is still exactly this tombstone. */
        PURGE,
        /** Put the bytes under the key in the hints. */
        HINT_PUT,
        /** Drop the key from the hints. */
        HINT_DELETE,
        /** Put the bytes under the key in the node's own metadata. */
        META_PUT
    }

    /** A change to commit, and the future that completes with whether it changed anything. */
    record Write(Kind kind, byte[] key, Record record, byte[] bytes, CompletableFuture<Boolean> done) {
        Write(Kind kind, byte[] key, Record record, byte[] bytes) {
            this(kind, key, record, bytes, new CompletableFuture<>());
        }
    }

    private final RocksStore store;
    private final int capacity;
    private final ConcurrentLinkedQueue<Write> queue = new ConcurrentLinkedQueue<>();
    private final AtomicInteger size = new AtomicInteger();
    private final Thread writer;
    private volatile boolean sleeping;
    private volatile boolean closing;

    WriteQueue(RocksStore store, int capacity) {
        this.store = store;
        this.capacity = capacity;
        this.writer = Thread.ofPlatform().name("ringkv-storage-writer").daemon().start(this::run);
    }

    CompletableFuture<Boolean> submit(Write write) {
        if (closing) {
            return CompletableFuture.failedFuture(new StorageException("the store is closing"));
        }
        if (size.incrementAndGet() > capacity) {
            size.decrementAndGet();
            return CompletableFuture.failedFuture(new StorageOverloadedException(capacity));
        }
        queue.offer(write);
        if (sleeping) {
            LockSupport.unpark(writer);
        }
        return write.done();
    }

    int size() {
        return size.get();
    }

    private void run() {
        List<Write> batch = new ArrayList<>(MAX_BATCH);
        while (true) {
            Write next = queue.poll();
            if (next == null) {
                if (closing) {
                    return;
                }
                sleeping = true;
                // Re-checked after announcing the sleep: a write queued meanwhile unparks us.
                if (queue.isEmpty() && !closing) {
                    LockSupport.park(this);
                }
                sleeping = false;
                continue;
            }
            batch.add(next);
            for (Write more; batch.size() < MAX_BATCH && (more = queue.poll()) != null; ) {
                batch.add(more);
            }
            size.addAndGet(-batch.size());
            commit(batch);
            batch.clear();
        }
    }

    private void commit(List<Write> batch) {
        boolean[] changed;
        try {
            changed = store.commit(batch);
        } catch (RuntimeException e) {
            if (!(e instanceof StorageException)) {
                log.error("a batch of {} writes failed", batch.size(), e);
            }
            batch.forEach(write -> write.done().completeExceptionally(e));
            return;
        }
        for (int i = 0; i < batch.size(); i++) {
            batch.get(i).done().complete(changed[i]);
        }
    }

    /** Lets the writer commit what is queued, then stops it; later writes fail. */
    @Override
    public void close() {
        closing = true;
        LockSupport.unpark(writer);
        try {
            writer.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        // Queued as the writer stopped: nobody will commit them.
        for (Write write; (write = queue.poll()) != null; ) {
            write.done().completeExceptionally(new StorageException("the store is closing"));
        }
    }
}
