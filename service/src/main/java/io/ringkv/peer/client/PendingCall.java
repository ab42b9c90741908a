package io.ringkv.peer.client;

import java.time.Duration;

import io.netty.buffer.ByteBuf;
import io.netty.util.concurrent.ScheduledFuture;
import io.ringkv.peer.message.FrameLimits;
import io.ringkv.peer.message.PeerCall;
import io.ringkv.peer.wire.PeerException;
import io.ringkv.peer.wire.Wire;
import reactor.core.publisher.MonoSink;

/** A request of a {@link PeerConnection} waiting for its answer. */
final class PendingCall<T> {

    private final MonoSink<T> sink;
    private final PeerCall.AnswerReader<T> reader;
    private final FrameLimits limits;
    private final Duration timeout;
    private final long sentNanos = System.nanoTime();
    /** Set and cancelled on the event loop. */
    private ScheduledFuture<?> timer;

    PendingCall(MonoSink<T> sink, PeerCall.AnswerReader<T> reader, FrameLimits limits, Duration timeout) {
        this.sink = sink;
        this.reader = reader;
        this.limits = limits;
        this.timeout = timeout;
    }

    Duration timeout() {
        return timeout;
    }

    /** When it was sent ({@link System#nanoTime}). */
    long sentNanos() {
        return sentNanos;
    }

    /** On the event loop. */
    void startTimer(ScheduledFuture<?> scheduled) {
        timer = scheduled;
    }

    void answer(String peer, byte type, ByteBuf payload) {
        stopTimer();
        try {
            if (type == Wire.ERROR) {
                sink.error(PeerException.from(peer, payload));
            } else {
                sink.success(reader.read(type, payload, limits));
            }
        } catch (RuntimeException e) {
            sink.error(e);
        }
    }

    void fail(Throwable error) {
        stopTimer();
        sink.error(error);
    }

    void stopTimer() {
        ScheduledFuture<?> scheduled = timer;
        if (scheduled != null) {
            scheduled.cancel(false);
        }
    }
}
