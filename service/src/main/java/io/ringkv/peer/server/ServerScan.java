package io.ringkv.peer.server;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongFunction;
import java.util.function.Supplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.netty.buffer.ByteBuf;
import io.ringkv.peer.message.Answer;
import io.ringkv.peer.wire.Wire;
import io.ringkv.record.KeyedRecord;
import io.ringkv.record.RecordBatch;
import io.ringkv.storage.RecordCursor;
import io.ringkv.storage.StorageException;

/**
 * One range stream to a peer (a key range's records, or a token range's versions), with
 * credit-based flow control: the peer grants bytes of records it
 * can take, this side sends batches only while it has credit and waits, holding nothing but its
 * cursor, when it has none. A slow reader therefore slows the scan; no buffer grows without bound.
 *
 * <p>The cursor is opened, read and closed on storage threads only (RocksDB blocks), by one
 * {@link #pump} at a time: the state moves between RUNNING (a pump owns the cursor) and PARKED
 * (out of credit, no pump scheduled), and whoever moves it from PARKED to RUNNING schedules the
 * next pump. A cancelled stream is closed by the next pump.
 *
 * <p>A paced stream (a transfer a peer pulls) waits, after each batch, for as long as its pace
 * says, still RUNNING, before the next pump: the batches go out at the sender's transfer rate,
 * and the END after the last of them.
 */
final class ServerScan {

    private static final Logger log = LoggerFactory.getLogger(ServerScan.class);

    /** A batch is sent once it holds this much, so that a scan writes a few large frames. */
    private static final int BATCH_BYTES = 64 * 1024;
    private static final int RUNNING = 0;
    private static final int PARKED = 1;
    private static final int FINISHED = 2;

    private final ServerSession session;
    private final int id;
    /** Opens the cursor, on a storage thread. */
    private final Supplier<RecordCursor> open;
    /** How long to wait after sending a batch of so many bytes. */
    private final LongFunction<Duration> pace;
    private final AtomicLong credit;
    private final AtomicInteger state = new AtomicInteger(RUNNING);
    private volatile boolean cancelled;
    /** Storage threads only, one pump at a time. */
    private RecordCursor cursor;
    /** The cursor has no more records; storage threads only, like the cursor. */
    private boolean exhausted;

    ServerScan(ServerSession session, int id, Supplier<RecordCursor> open, int initialCredit, LongFunction<Duration> pace) {
        this.session = session;
        this.id = id;
        this.open = open;
        this.pace = pace;
        this.credit = new AtomicLong(Math.clamp(initialCredit, 0, ServerSettings.MAX_CREDIT));
    }

    void start() {
        schedulePump();
    }

    /**
     * On the event loop: the peer took records and can take this many bytes more; what it may be
     * owed is capped at {@link ServerSettings#MAX_CREDIT}, and a negative grant is ignored.
     */
    void credit(int bytes) {
        if (bytes <= 0) {
            return;
        }
        credit.accumulateAndGet(bytes, (owed, more) -> Math.min(ServerSettings.MAX_CREDIT, owed + more));
        if (state.compareAndSet(PARKED, RUNNING)) {
            schedulePump();
        }
    }

    /** On the event loop: the peer does not want the rest, or the connection closed. */
    void cancel() {
        cancelled = true;
        if (state.compareAndSet(PARKED, RUNNING)) {
            schedulePump();
        }
    }

    private void schedulePump() {
        try {
            session.storage().schedule(this::pump);
        } catch (RejectedExecutionException e) {
            // The storage queue is full: give up the stream (the peer sees an error, not a hang).
            if (cursor == null) {
                state.set(FINISHED);
                session.scanFinished(id);
                session.send(Answer.error(id, Wire.ErrorCode.OVERLOADED, "storage queue full"));
            } else {
                // A cursor is open and must be read or closed on a storage thread: try again shortly.
                session.later(this::schedulePump);
            }
        }
    }

    private void pump() {
        try {
            if (cursor == null && !cancelled) {
                cursor = open.get();
            }
            while (true) {
                if (cancelled) {
                    finish(null);
                    return;
                }
                if (credit.get() <= 0) {
                    state.set(PARKED);
                    // Credit or a cancel may have come in after the check: whoever wins the CAS goes on.
                    if ((credit.get() > 0 || cancelled) && state.compareAndSet(PARKED, RUNNING)) {
                        continue;
                    }
                    return;
                }
                int sent = sendBatch();
                // Every byte sent is reserved, the last batch's too: the next transfer waits for it.
                Duration wait = sent == 0 ? Duration.ZERO : pace.apply(sent);
                if (exhausted) {
                    finish(allocator -> Wire.empty(allocator, Wire.END, id));
                    return;
                }
                if (wait.isPositive()) {
                    // Still RUNNING: no credit or cancel schedules a pump meanwhile; this one does.
                    session.after(wait, this::schedulePump);
                    return;
                }
            }
        } catch (StorageException e) {
            finish(Answer.error(id, Wire.ErrorCode.STORAGE, e.getMessage()));
        } catch (RuntimeException e) {
            log.warn("range stream {} failed", id, e);
            finish(Answer.error(id, Wire.ErrorCode.INTERNAL, e.toString()));
        }
    }

    /** Sends one batch of records within the credit, and returns its bytes; sets {@link #exhausted} at the range's end. */
    private int sendBatch() {
        List<KeyedRecord> records = new ArrayList<>();
        int bytes = 0;
        while (credit.get() > 0 && bytes < BATCH_BYTES) {
            KeyedRecord next = cursor.next();
            if (next == null) {
                exhausted = true;
                break;
            }
            int size = RecordBatch.entrySize(next);
            credit.addAndGet(-size);
            bytes += size;
            records.add(next);
        }
        if (!records.isEmpty()) {
            int hint = bytes;
            session.send(allocator -> {
                ByteBuf batch = Wire.batch(allocator, id, hint);
                records.forEach(record -> Wire.addToBatch(batch, record));
                return Wire.seal(batch);
            });
        }
        return bytes;
    }

    /** Closes the cursor (on this storage thread) and sends the last frame, if any. */
    private void finish(Answer last) {
        state.set(FINISHED);
        if (cursor != null) {
            cursor.close();
            cursor = null;
        }
        session.scanFinished(id);
        if (last != null) {
            session.send(last);
        }
    }
}
