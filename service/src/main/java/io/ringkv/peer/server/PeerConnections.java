package io.ringkv.peer.server;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * The connections peers opened to the cluster port: those still in the handshake (bounded, see
 * {@link ServerSettings#MAX_CONNECTIONS_IN_HANDSHAKE}), those that passed it and are open, and
 * those refused, logged once per address in a while ({@link RefusalLog}: a peer retrying with a
 * wrong secret would fill the log) and counted every time.
 */
final class PeerConnections {

    private static final Logger log = LoggerFactory.getLogger(PeerConnections.class);

    /** Addresses remembered for the log, and how long one stays quiet after its line. */
    private static final int LOGGED_ADDRESSES = 1024;
    private static final Duration LOG_QUIET = Duration.ofMinutes(10);

    private final AtomicInteger open = new AtomicInteger();
    private final AtomicInteger inHandshake = new AtomicInteger();
    private final int maxInHandshake;
    private final Counter refusedPeers;
    private final RefusalLog refusalLog = new RefusalLog(LOGGED_ADDRESSES, LOG_QUIET.toMillis());

    PeerConnections(MeterRegistry meters) {
        this(meters, ServerSettings.MAX_CONNECTIONS_IN_HANDSHAKE);
    }

    PeerConnections(MeterRegistry meters, int maxInHandshake) {
        this.maxInHandshake = maxInHandshake;
        this.refusedPeers = Counter.builder("ringkv.peer.connections.refused")
                .description("Connections to the cluster port refused: a failed handshake (a wrong or missing secret, a name"
                        + " that is no member's), or one too many in the handshake at once")
                .register(meters);
        Gauge.builder("ringkv.peer.connections", open, AtomicInteger::get)
                .description("Connections from peers that passed the handshake, open now")
                .register(meters);
    }

    /**
     * A new connection: whether it may start the handshake. Past the bound it is refused, and the
     * caller closes it at once; else it counts until {@link #handshakeEnded}.
     */
    boolean startHandshake(SocketAddress remote) {
        if (inHandshake.incrementAndGet() > maxInHandshake) {
            inHandshake.decrementAndGet();
            refused(remote, "more than " + maxInHandshake + " connections in the handshake at once");
            return false;
        }
        return true;
    }

    /** A connection admitted by {@link #startHandshake} passed the handshake, failed it or closed. */
    void handshakeEnded() {
        inHandshake.decrementAndGet();
    }

    /** Connections in the handshake now. */
    int inHandshake() {
        return inHandshake.get();
    }

    /** A peer from that address proved the secret: its connection is open, and a later refusal is news again. */
    void accepted(SocketAddress remote) {
        open.incrementAndGet();
        refusalLog.forget(host(remote));
    }

    /** An accepted connection closed. */
    void closed() {
        open.decrementAndGet();
    }

    /** Counts every refusal; logs one per address in a while. The reason must be safe to log. */
    void refused(SocketAddress remote, String reason) {
        refusedPeers.increment();
        if (refusalLog.shouldLog(host(remote), System.currentTimeMillis())) {
            log.warn("refused a connection from {}: {} (further refusals from that address within {} are only counted)",
                    remote, reason, LOG_QUIET);
        }
    }

    /** The address without its port: each attempt of the same peer comes from a new port. */
    private static String host(SocketAddress remote) {
        return remote instanceof InetSocketAddress inet && inet.getAddress() != null ? inet.getAddress().getHostAddress()
                : String.valueOf(remote);
    }
}
