package io.ringkv.peer.client;

import java.net.URI;
import java.time.Duration;

import io.netty.channel.ChannelOption;
import io.netty.handler.flush.FlushConsolidationHandler;
import io.ringkv.peer.wire.FrameDecoder;
import io.ringkv.peer.wire.PeerException;
import io.ringkv.peer.wire.Wire;
import reactor.core.publisher.Mono;
import reactor.netty.NettyPipeline;
import reactor.netty.resources.LoopResources;
import reactor.netty.tcp.TcpClient;

/**
 * Opens authenticated connections to peers, on Reactor Netty's {@link TcpClient} and the node's
 * own event loops; one per node, shared by every {@code PeerClient}. A peer's cluster port is
 * asked of the peer itself, on its public port ({@link NodeInfoClient}): nodes on one host each
 * take a free port, and a restarted node may have another.
 */
public final class PeerConnector {

    private final ConnectionSettings settings;
    private final TcpClient tcp;
    private final NodeInfoClient nodeInfo;
    private final ClientSecurity security;

    public PeerConnector(ConnectionSettings settings, LoopResources loops, NodeInfoClient nodeInfo, ClientSecurity security) {
        this.settings = settings;
        this.nodeInfo = nodeInfo;
        this.security = security;
        this.tcp = TcpClient.newConnection()
                .runOn(loops)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(Integer.MAX_VALUE, settings.timeout().toMillis()))
                .option(ChannelOption.TCP_NODELAY, true)
                .resolver(dns -> dns.cacheMaxTimeToLive(settings.dnsCacheMaxTtl()).cacheNegativeTimeToLive(Duration.ZERO));
    }

    /** The port the peer answers peers on, as it tells on its public port. */
    Mono<Integer> clusterPort(String peer) {
        return nodeInfo.of(URI.create(peer)).map(NodeInfoClient.NodeInfo::clusterPort);
    }

    /**
     * A new connection to the peer at the host and port, once its handshake succeeded. With TLS the
     * peer must prove the host of its name, wherever it was reached.
     */
    Mono<PeerConnection> connect(String peer, String host, int port) {
        int maxFrame = Wire.maxFrame(settings.maxKeyLength(), settings.maxRecordLength());
        String peerHost = URI.create(peer).getHost();
        return tcp.host(host)
                .port(port)
                .doOnChannelInit((observer, channel, address) -> {
                    channel.pipeline()
                            .addFirst("ringkv.flush", new FlushConsolidationHandler(256, true))
                            .addBefore(NettyPipeline.ReactiveBridge, "ringkv.frames", new FrameDecoder(maxFrame))
                            .addBefore(NettyPipeline.ReactiveBridge, "ringkv.session", new PeerConnection(settings, peer));
                    security.secure(channel, peerHost, port);
                })
                .connect()
                .flatMap(connection -> connection.channel().pipeline().get(PeerConnection.class).ready()
                        .timeout(settings.timeout(), Mono.error(() -> new PeerException.Unavailable(peer,
                                "no handshake within " + settings.timeout() + " (is port " + port + " its cluster port?)")))
                        .doOnError(error -> connection.dispose()));
    }

    /** What its connections are opened with; the clients read their timeout and connection count here. */
    ConnectionSettings settings() {
        return settings;
    }
}
