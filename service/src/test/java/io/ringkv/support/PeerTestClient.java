package io.ringkv.support;

import java.net.InetSocketAddress;
import java.time.Duration;

import io.ringkv.peer.client.NodeInfoClient;
import io.ringkv.peer.client.PeerClient;
import io.ringkv.peer.client.ClientSecurity;
import io.ringkv.peer.client.ConnectionSettings;
import io.ringkv.peer.client.PeerConnector;
import io.ringkv.peer.wire.Handshake;
import reactor.netty.resources.LoopResources;

/**
 * The test speaking the node-to-node protocol, as a peer would, with a secret of its choosing:
 * it reads a replica's own copy of a key, or tries the cluster port with a wrong secret.
 */
public final class PeerTestClient implements AutoCloseable {

    /** The name the test gives itself in the handshake. */
    public static final String NAME = "http://ringkv-test-client:1";

    private final LoopResources loops = LoopResources.create("peer-test", 1, true);
    private final PeerConnector connector;

    public PeerTestClient(String secret) {
        this(secret, ClientSecurity.PLAINTEXT, NAME);
    }

    /**
     * With TLS: the certificate {@code security} presents is the one the node sees, and the name
     * the test claims must be one it is for.
     */
    public PeerTestClient(String secret, ClientSecurity security, String name) {
        Duration timeout = Duration.ofSeconds(5);
        connector = new PeerConnector(new ConnectionSettings(name, new Handshake(secret), timeout, 1, 256 * 1024,
                1024, 16 * 1024 * 1024, Duration.ofSeconds(1), 0), loops, new NodeInfoClient(loops, timeout, Duration.ofSeconds(1), security),
                security);
    }

    /** The node named {@code peer}, found through the port it tells on its public API. */
    public PeerClient of(String peer) {
        return new PeerClient(peer, connector);
    }

    /** The node named {@code peer}, at a given address (a port Docker mapped). */
    public PeerClient at(String peer, InetSocketAddress address) {
        return new PeerClient(peer, address, connector);
    }

    @Override
    public void close() {
        loops.disposeLater(Duration.ZERO, Duration.ofSeconds(5)).block(Duration.ofSeconds(6));
    }
}
