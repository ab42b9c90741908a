package io.ringkv.peer.client;

import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;

import io.netty.channel.ChannelOption;
import io.netty.handler.flush.FlushConsolidationHandler;
import io.ringkv.peer.wire.FrameDecoder;
import io.ringkv.peer.wire.Handshake;
import io.ringkv.peer.wire.PeerException;
import io.ringkv.peer.wire.Wire;
import reactor.core.publisher.Mono;
import reactor.netty.NettyPipeline;
import reactor.netty.resources.LoopResources;
import reactor.netty.tcp.TcpClient;

/**
 * Opens authenticated connections to peers, on Reactor Netty's {@link TcpClient} and the node's
 * own event loops; one per node, shared by every {@link PeerClient}. A peer's cluster port is
 * asked of the peer itself, on its public port ({@link NodeInfoClient}): nodes on one host each
 * take a free port, and a restarted node may have another.
 */
public final class PeerConnector {

    /**
     * @param self               this node's name on the ring, which it tells every peer
     * @param handshake          the proof of the cluster secret
     * @param timeout            the longest a call (connecting included) may take
     * @param connectionsPerPeer persistent connections to each peer; requests are spread over them
     * @param scanWindow         bytes of records a peer may send ahead on a range stream
     * @param maxKeyLength       the longest key a peer may send
     * @param maxRecordLength    the largest record a peer may send
     * @param dnsCacheMaxTtl     the longest a peer's address is cached, whatever its DNS record's TTL
     *                           says: a restarted pod comes back with a new address under the same name
     */
    public record Settings(String self, Handshake handshake, Duration timeout, int connectionsPerPeer, int scanWindow,
            int maxKeyLength, int maxRecordLength, Duration dnsCacheMaxTtl) {
    }

    private final Settings settings;
    private final Handshake handshake;
    private final TcpClient tcp;
    private final NodeInfoClient nodeInfo;

    public PeerConnector(Settings settings, LoopResources loops, NodeInfoClient nodeInfo) {
        this.settings = settings;
        this.handshake = settings.handshake();
        this.nodeInfo = nodeInfo;
        this.tcp = TcpClient.newConnection()
                .runOn(loops)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(Integer.MAX_VALUE, settings.timeout().toMillis()))
                .option(ChannelOption.TCP_NODELAY, true)
                .resolver(dns -> dns.cacheMaxTimeToLive(settings.dnsCacheMaxTtl()).cacheNegativeTimeToLive(Duration.ZERO));
    }

    /** A client of the peer, found by its name's host and the cluster port it tells. */
    public PeerClient client(String peer) {
        return new PeerClient(peer, null, this);
    }

    /**
     * A client of the peer at a fixed address instead: where its name does not resolve, or its port
     * is mapped elsewhere (Docker, a proxy). The handshake still checks that the peer is who it should be.
     */
    public PeerClient client(String peer, InetSocketAddress address) {
        return new PeerClient(peer, address, this);
    }

    /** The port the peer answers peers on, as it tells on its public port. */
    Mono<Integer> clusterPort(String peer) {
        return nodeInfo.of(URI.create(peer)).map(NodeInfoClient.NodeInfo::clusterPort);
    }

    /** A new connection to the peer at the host and port, once its handshake succeeded. */
    Mono<PeerConnection> connect(String peer, String host, int port) {
        int maxFrame = Wire.maxFrame(settings.maxKeyLength(), settings.maxRecordLength());
        return tcp.host(host)
                .port(port)
                .doOnChannelInit((observer, channel, address) -> channel.pipeline()
                        .addFirst("ringkv.flush", new FlushConsolidationHandler(256, true))
                        .addBefore(NettyPipeline.ReactiveBridge, "ringkv.frames", new FrameDecoder(maxFrame))
                        .addBefore(NettyPipeline.ReactiveBridge, "ringkv.session", new PeerConnection(this, peer)))
                .connect()
                .flatMap(connection -> connection.channel().pipeline().get(PeerConnection.class).ready()
                        .timeout(settings.timeout(), Mono.error(() -> new PeerException.Unavailable(peer,
                                "no handshake within " + settings.timeout() + " (is port " + port + " its cluster port?)")))
                        .doOnError(error -> connection.dispose()));
    }

    Handshake handshake() {
        return handshake;
    }

    String self() {
        return settings.self();
    }

    Duration timeout() {
        return settings.timeout();
    }

    int connectionsPerPeer() {
        return settings.connectionsPerPeer();
    }

    int scanWindow() {
        return settings.scanWindow();
    }

    int maxKeyLength() {
        return settings.maxKeyLength();
    }

    int maxRecordLength() {
        return settings.maxRecordLength();
    }
}
