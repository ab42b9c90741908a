package io.ringkv.peer.server;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.channel.Channel;
import io.ringkv.overload.ByteBound;

/**
 * The requests from peers in progress now, from all connections together, and the bytes of values
 * they hold. Bounded by backpressure, not refusal: past either bound the node stops reading the
 * connections that bring more, and reads them again once half is done.
 */
final class PeerLoad {

    private final int maxRequests;
    private final long maxBytes;
    private final AtomicInteger inFlight = new AtomicInteger();
    private final ByteBound bytesInFlight;
    /** Connections not read while the requests in progress are past the bounds. */
    private final Set<Channel> paused = ConcurrentHashMap.newKeySet();

    PeerLoad(int maxRequests, long maxBytes, MeterRegistry meters) {
        this.maxRequests = maxRequests;
        this.maxBytes = maxBytes;
        this.bytesInFlight = new ByteBound(maxBytes);
        Gauge.builder("ringkv.replica.requests.inflight", inFlight, AtomicInteger::get)
                .description("Requests from peers this node is working on")
                .register(meters);
        Gauge.builder("ringkv.replica.bytes.inflight", bytesInFlight, ByteBound::held)
                .description("Bytes of values in peers' writes this node is storing and in reads it is answering")
                .baseUnit("bytes")
                .register(meters);
        Gauge.builder("ringkv.replica.requests.limit", () -> maxRequests)
                .description("Requests from peers this node works on at most")
                .register(meters);
    }

    /**
     * A request from the channel is in progress now, holding {@code bytes} of values: past the
     * bound on requests or bytes, the channel is read no further for now.
     */
    void started(Channel channel, long bytes) {
        int requests = inFlight.incrementAndGet();
        bytesInFlight.hold(bytes);
        if (requests > maxRequests || !bytesInFlight.hasRoomFor(0)) {
            channel.config().setAutoRead(false);
            paused.add(channel);
            // The requests that would resume it may all have ended meanwhile.
            resumeIfRoom();
        }
    }

    /** A request has ended and gives its bytes back; the paused connections are read again once half is free. */
    void ended(long bytes) {
        inFlight.decrementAndGet();
        released(bytes);
    }

    /** Bytes held for a request (a write's value, a read's answer) are given back. */
    void released(long bytes) {
        bytesInFlight.release(bytes);
        resumeIfRoom();
    }

    /** Holds the bytes if there is room now; never waits (event loops). */
    boolean tryHold(long bytes) {
        return bytesInFlight.tryHold(bytes);
    }

    /** Holds the bytes once there is room, waiting at most {@code wait} (storage threads only). */
    boolean holdWithin(long bytes, Duration wait) throws InterruptedException {
        return bytesInFlight.holdWithin(bytes, wait);
    }

    private void resumeIfRoom() {
        if (paused.isEmpty() || 2L * inFlight.get() > maxRequests || !bytesInFlight.hasRoomFor(maxBytes / 2)) {
            return;
        }
        for (Channel channel : List.copyOf(paused)) {
            if (paused.remove(channel)) {
                channel.eventLoop().execute(() -> {
                    channel.config().setAutoRead(true);
                    channel.read();
                });
            }
        }
    }
}
