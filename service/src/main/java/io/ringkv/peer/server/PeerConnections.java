package io.ringkv.peer.server;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * The connections peers opened to the cluster port: those that passed the handshake and are open,
 * and those refused, each address's refusal logged once (a peer retrying with a wrong secret would
 * fill the log), and counted every time.
 */
final class PeerConnections {

    private static final Logger log = LoggerFactory.getLogger(PeerConnections.class);

    private final AtomicInteger open = new AtomicInteger();
    private final Counter refusedPeers;
    /** Remote addresses whose refusal was logged: a peer retrying with a wrong secret is logged once. */
    private final Set<String> refusalsLogged = ConcurrentHashMap.newKeySet();

    PeerConnections(MeterRegistry meters) {
        this.refusedPeers = Counter.builder("ringkv.peer.connections.refused")
                .description("Connections to the cluster port that failed the handshake (a wrong or missing secret)")
                .register(meters);
        Gauge.builder("ringkv.peer.connections", open, AtomicInteger::get)
                .description("Connections from peers that passed the handshake, open now")
                .register(meters);
    }

    /** A peer from that address proved the secret: its connection is open, and a later refusal is news again. */
    void accepted(String remote) {
        open.incrementAndGet();
        refusalsLogged.remove(remote);
    }

    /** An accepted connection closed. */
    void closed() {
        open.decrementAndGet();
    }

    /** Logs a refused peer once per address (and counts every refusal). */
    void refused(String remote, String reason) {
        refusedPeers.increment();
        if (refusalsLogged.add(remote)) {
            log.warn("refused a connection from {}: {} (further refusals from it are only counted)", remote, reason);
        }
    }
}
