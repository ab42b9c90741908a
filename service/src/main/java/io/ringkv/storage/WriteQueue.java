package io.ringkv.storage;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;
import java.util.function.UnaryOperator;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.ringkv.record.Record;

/**
 * The store's one writer: a thread that takes every write waiting and commits them as one batch
 * ({@link BatchCommit#commit}). Writes are queued from any thread without a lock (event loops
 * among them) and the writer is woken only when it sleeps. Under load a batch holds many writes:
 * one write-ahead-log append, and one fsync with synchronous writes, for all of them.
 *
 * <p>Bounded twice, both refusing at once: by count, and by the bytes of the values waiting or
 * being committed. Most writes come in through paths bounded in bytes already (client and peer
 * writes), but hints and read repairs do not, and a count alone lets ten thousand values of
 * megabytes wait in a heap of 256 MiB.
 */
final class WriteQueue implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(WriteQueue.class);

    /** The most writes one batch takes, so that the first of them is not kept waiting long. */
    private static final int MAX_BATCH = 1024;

    /** What a change does. */
    enum Kind {
        /** Store the record unless a newer one is held. */
        RECORD,
        /** Drop the key's record if it is still exactly this version (timestamp and tombstone flag). */
        REMOVE,
        /** Put the bytes under the key in the hints. */
        HINT_PUT,
        /** Drop the key from the hints. */
        HINT_DELETE,
        /** Put the bytes under the key in the node's own metadata. */
        META_PUT,
        /** Change the key's consensus state by the write's function of it. */
        PAXOS_CHANGE
    }

    /**
     * A change to commit, and the future that completes with whether it changed anything.
     *
     * @param change for {@link Kind#PAXOS_CHANGE}: the new bytes from the current ones (null for
     *               none), or the same array for no change; run by the writer, so it must be quick
     */
    record Write(Kind kind, byte[] key, Record record, byte[] bytes, UnaryOperator<byte[]> change, CompletableFuture<Boolean> done) {
        Write(Kind kind, byte[] key, Record record, byte[] bytes) {
            this(kind, key, record, bytes, null, new CompletableFuture<>());
        }

        static Write change(byte[] key, UnaryOperator<byte[]> change) {
            return new Write(Kind.PAXOS_CHANGE, key, null, null, change, new CompletableFuture<>());
        }

        /** The value bytes it keeps in memory: a record's value or a hint; keys and the small rest are bounded by count. */
        long valueBytes() {
            return (record == null ? 0 : record.valueLength()) + (bytes == null ? 0 : bytes.length);
        }
    }

    private final Function<List<Write>, boolean[]> committer;
    private final int capacity;
    private final long maxValueBytes;
    private final ConcurrentLinkedQueue<Write> queue = new ConcurrentLinkedQueue<>();
    private final AtomicInteger size = new AtomicInteger();
    /** Value bytes queued or in the batch being committed: they are in memory until it ends. */
    private final AtomicLong valueBytes = new AtomicLong();
    private final Thread writer;
    private volatile boolean sleeping;
    private volatile boolean closing;

    /**
     * @param committer     commits a batch, saying for each write whether it changed anything
     * @param capacity      writes that may wait; more are refused
     * @param maxValueBytes value bytes that may wait or be committing; more are refused, except
     *                      for a write alone, so that a value the node accepts is never refused for its size
     */
    WriteQueue(Function<List<Write>, boolean[]> committer, int capacity, long maxValueBytes) {
        this.committer = committer;
        this.capacity = capacity;
        this.maxValueBytes = maxValueBytes;
        this.writer = Thread.ofPlatform().name("ringkv-storage-writer").daemon().start(this::run);
    }

    CompletableFuture<Boolean> submit(Write write) {
        if (closing) {
            return CompletableFuture.failedFuture(new StorageException("the store is closing"));
        }
        if (size.incrementAndGet() > capacity) {
            size.decrementAndGet();
            return CompletableFuture.failedFuture(new StorageOverloadedException("more than " + capacity + " writes wait for storage"));
        }
        long bytes = write.valueBytes();
        long waiting = valueBytes.addAndGet(bytes);
        if (bytes > 0 && waiting > maxValueBytes && waiting != bytes) {
            valueBytes.addAndGet(-bytes);
            size.decrementAndGet();
            return CompletableFuture.failedFuture(new StorageOverloadedException(
                    "more than " + maxValueBytes + " bytes of values wait for storage"));
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

    long valueBytes() {
        return valueBytes.get();
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
        long batchBytes = batch.stream().mapToLong(Write::valueBytes).sum();
        boolean[] changed;
        try {
            changed = committer.apply(batch);
        } catch (RuntimeException e) {
            valueBytes.addAndGet(-batchBytes);
            if (!(e instanceof StorageException)) {
                log.error("a batch of {} writes failed", batch.size(), e);
            }
            batch.forEach(write -> write.done().completeExceptionally(e));
            return;
        }
        // Given back before the writes complete: whoever they wake finds the room.
        valueBytes.addAndGet(-batchBytes);
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
