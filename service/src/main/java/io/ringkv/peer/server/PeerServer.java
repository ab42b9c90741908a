package io.ringkv.peer.server;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.function.UnaryOperator;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.micrometer.core.instrument.MeterRegistry;
import io.netty.handler.flush.FlushConsolidationHandler;
import io.ringkv.peer.message.PeerService;
import io.ringkv.peer.wire.FrameDecoder;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.netty.DisposableServer;
import reactor.netty.NettyPipeline;
import reactor.netty.resources.LoopResources;
import reactor.netty.tcp.TcpServer;

/**
 * Answers peers on the cluster port: one {@link ServerSession} per connection, on Reactor Netty's
 * {@link TcpServer} and the node's own event loops. Storage work runs on the storage scheduler.
 * Requests in progress from all peers together, and the bytes of values they hold, are bounded by
 * backpressure, not refusal: past either bound the node stops reading the connections that bring
 * more, and reads them again once half is done. The peers' requests then wait in their sockets and
 * in the callers' windows ({@code ReplicaWindow}); a refused write would have become a hint.
 */
public final class PeerServer implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(PeerServer.class);

    private final DisposableServer server;

    /**
     * @param customizer changes the server before it binds, as Spring Boot's NettyServerCustomizer
     *                   does the public one's: the tests' fault injection adds to its pipeline
     */
    public PeerServer(ServerSettings settings, PeerService service, Scheduler storage, LoopResources loops, MeterRegistry meters,
            UnaryOperator<TcpServer> customizer) {
        var load = new PeerLoad(settings.maxRequests(), settings.maxBytes(), meters);
        var connections = new PeerConnections(meters);
        this.server = customizer.apply(TcpServer.create()
                .runOn(loops)
                .port(settings.port())
                // Set up when the channel is created, so that the session sees it become active; before
                // Reactor Netty's own bridge, which would take the frames for a reactive stream.
                .doOnChannelInit((observer, channel, address) -> channel.pipeline()
                        // Answers written while the loop is busy go out together, in one system call.
                        .addFirst("ringkv.flush", new FlushConsolidationHandler(256, true))
                        .addBefore(NettyPipeline.ReactiveBridge, "ringkv.frames", new FrameDecoder(settings.maxFrame()))
                        .addBefore(NettyPipeline.ReactiveBridge, "ringkv.session", new ServerSession(settings, service, storage, load, connections)))
                .handle((in, out) -> Mono.never()))
                .bindNow();
        log.info("answering peers on port {}", port());
    }

    /** The port it listens on: the configured one, or the free one it took. */
    public int port() {
        return ((InetSocketAddress) server.address()).getPort();
    }

    @Override
    public void close() {
        server.disposeNow(Duration.ofSeconds(5));
    }
}
