package io.ringkv.peer.server;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.SequencedSet;
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
 *
 * <p>Past the bound a new connection closes the oldest one still in the handshake, not itself: a
 * member proves itself within milliseconds of connecting, so it is through long before enough
 * newer connections arrive to make it the oldest, while connections that never finish (idle, or
 * stalled halfway through a TLS or a handshake frame) cannot hold the slots against it, however
 * many there are and however often they are reopened, from whatever address.
 */
final class PeerConnections {

    private static final Logger log = LoggerFactory.getLogger(PeerConnections.class);

    /** Addresses remembered for the log, and how long one stays quiet after its line. */
    private static final int LOGGED_ADDRESSES = 1024;
    private static final Duration LOG_QUIET = Duration.ofMinutes(10);

    private final AtomicInteger open = new AtomicInteger();
    /** Oldest first. Sessions on every event loop add and remove theirs: guarded by itself. */
    private final SequencedSet<ServerSession> inHandshake = new LinkedHashSet<>();
    private final Counter refusedPeers;
    private final RefusalLog refusalLog = new RefusalLog(LOGGED_ADDRESSES, LOG_QUIET.toMillis());

    PeerConnections(MeterRegistry meters) {
        this.refusedPeers = Counter.builder("ringkv.peer.connections.refused")
                .description("Connections to the cluster port refused: a failed handshake (a wrong or missing secret, a name"
                        + " that is no member's), none within the handshake timeout, or the oldest in the handshake closed"
                        + " to make room for a new one")
                .register(meters);
        Gauge.builder("ringkv.peer.connections", open, AtomicInteger::get)
                .description("Connections from peers that passed the handshake, open now")
                .register(meters);
    }

    /**
     * A new connection starts the handshake; it counts until {@link #accepted} or
     * {@link #handshakeEnded}. Past the bound, the oldest connection still in the handshake is
     * closed to make room.
     */
    void startHandshake(ServerSession session) {
        ServerSession oldest = null;
        synchronized (inHandshake) {
            inHandshake.add(session);
            if (inHandshake.size() > ServerSettings.MAX_CONNECTIONS_IN_HANDSHAKE) {
                oldest = inHandshake.removeFirst();
            }
        }
        if (oldest != null) {
            oldest.closeToMakeRoom("the oldest of more than " + ServerSettings.MAX_CONNECTIONS_IN_HANDSHAKE
                    + " connections in the handshake, closed to make room for a new one");
        }
    }

    /**
     * The connection from that address proved the secret: whether it is open, or was closed to
     * make room a moment before (then it is closing). If open, a later refusal from the address is
     * news again.
     */
    boolean accepted(ServerSession session, SocketAddress remote) {
        synchronized (inHandshake) {
            if (!inHandshake.remove(session)) {
                return false;
            }
        }
        open.incrementAndGet();
        refusalLog.forget(host(remote));
        return true;
    }

    /** A connection closed before it passed the handshake. */
    void handshakeEnded(ServerSession session) {
        synchronized (inHandshake) {
            inHandshake.remove(session);
        }
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
