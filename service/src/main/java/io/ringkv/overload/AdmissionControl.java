package io.ringkv.overload;

import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * Bounds the client requests a node works on at once, so that a burst beyond what it can serve
 * gets a quick 503 with Retry-After instead of queueing until the heap runs out. The public API's
 * routes take a slot for the whole exchange (a range holds it while it streams). Requests from
 * peers arrive on the cluster port and are bounded apart there ({@link io.ringkv.peer.server.PeerServer}):
 * a flood of clients cannot starve replication, which every client request of the other nodes
 * depends on. Actuator is not bounded, so health and metrics stay readable under overload.
 *
 * <p>Values are bounded apart, in bytes: a PUT holds its value's bytes from the moment they
 * arrive until the last of its replicas has answered (or failed), which is after the client's
 * answer when slower replicas are still writing. Counting requests alone would let 256 PUTs of
 * 4 MiB, each held several times over (body, record, a frame per peer), take gigabytes.
 */
public final class AdmissionControl {

    private final int limit;
    private final AtomicInteger inFlight = new AtomicInteger();
    private final ByteBound bytes;

    public AdmissionControl(int maxClientRequests, long maxBytesInFlight, MeterRegistry meters) {
        this.limit = maxClientRequests;
        this.bytes = new ByteBound(maxBytesInFlight);
        Gauge.builder("ringkv.client.requests.inflight", inFlight, AtomicInteger::get)
                .description("Client requests the node is working on")
                .register(meters);
        Gauge.builder("ringkv.client.requests.limit", () -> limit)
                .description("Client requests the node works on at most")
                .register(meters);
        Gauge.builder("ringkv.client.bytes.inflight", bytes, ByteBound::held)
                .description("Bytes of values being received or written to replicas")
                .baseUnit("bytes")
                .register(meters);
    }

    /** Takes a slot; false when all are taken, and the request is to be refused. */
    public boolean tryEnter() {
        if (inFlight.incrementAndGet() > limit) {
            inFlight.decrementAndGet();
            return false;
        }
        return true;
    }

    /** Gives back a slot taken by {@link #tryEnter()}. */
    public void leave() {
        inFlight.decrementAndGet();
    }

    /** Whether {@code count} more would fit now: lets a request that says its size be refused before it is read. */
    public boolean hasRoomFor(long count) {
        return bytes.hasRoomFor(count);
    }

    /** A hold on one request's bytes, with one holder: the exchange. */
    public Held held() {
        return new Held();
    }

    /**
     * The bytes of one request's values as they arrive, given back when the last holder lets go:
     * the exchange, and the replica calls (and a read's background repairs), which may end after
     * the exchange and keep the values until then.
     */
    public final class Held {
        private long holding;
        private int holders = 1;

        private Held() {
        }

        /**
         * Holds {@code count} more bytes; false, holding nothing more, past the bound. Once every
         * holder has let go nothing is held any more: what comes then is not kept for the request.
         */
        public synchronized boolean tryAdd(long count) {
            if (holders == 0) {
                return true;
            }
            if (!bytes.tryHold(count, holding)) {
                return false;
            }
            holding += count;
            return true;
        }

        /**
         * Holds the bytes of one replica's answer to a read. The first answer must fit, as
         * {@link #tryAdd} says; the other answers of a read that was let in are held whatever the
         * bound, so that it can finish: reads that each hold one answer and wait for room for the
         * next would otherwise refuse each other until none is left. At most a replication factor
         * times the bound is held this way.
         */
        public synchronized boolean tryAddAnswer(long count) {
            if (holders > 0 && holding > 0) {
                bytes.hold(count);
                holding += count;
                return true;
            }
            return tryAdd(count);
        }

        /** One more holder, who must {@link #release()} too. */
        public synchronized void retain() {
            holders++;
        }

        public synchronized void release() {
            if (--holders == 0) {
                bytes.release(holding);
                holding = 0;
            }
        }
    }
}
