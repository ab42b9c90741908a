package io.ringkv.overload;

import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * Bounds the client requests a node works on at once, so that a burst beyond what it can serve
 * gets a quick 503 with Retry-After instead of queueing until the heap runs out. The public API's
 * routes take a slot for the whole exchange (a range holds it while it streams). Requests from
 * peers arrive on the cluster port and are bounded apart there ({@link io.ringkv.peer.PeerServer}):
 * a flood of clients cannot starve replication, which every client request of the other nodes
 * depends on. Actuator is not bounded, so health and metrics stay readable under overload.
 */
public final class AdmissionControl {

    private final int limit;
    private final AtomicInteger inFlight = new AtomicInteger();

    public AdmissionControl(int maxClientRequests, MeterRegistry meters) {
        this.limit = maxClientRequests;
        Gauge.builder("ringkv.client.requests.inflight", inFlight, AtomicInteger::get)
                .description("Client requests the node is working on")
                .register(meters);
        Gauge.builder("ringkv.client.requests.limit", () -> limit)
                .description("Client requests the node works on at most")
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
}
