package io.ringkv.peer;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.handler.flush.FlushConsolidationHandler;
import io.ringkv.overload.ByteBound;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.netty.DisposableServer;
import reactor.netty.NettyPipeline;
import reactor.netty.resources.LoopResources;
import reactor.netty.tcp.TcpServer;

/**
 * Answers peers on the cluster port: one {@link ServerSession} per connection, on Reactor Netty's
 * {@link TcpServer} and the node's own event loops. Storage work runs on the storage scheduler.
 * Requests in progress from all peers together are bounded; past the bound a request is answered
 * OVERLOADED at once, which the caller counts as a failed replica.
 */
public final class PeerServer implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(PeerServer.class);

    /**
     * @param port              the cluster port; 0 takes a free one
     * @param handshake         the proof of the cluster secret
     * @param maxKeyLength      the longest key a peer may send
     * @param maxRecordLength   the largest record a peer may send
     * @param maxRequests       requests from peers in progress at once
     * @param maxBytes          bytes of values in peers' reads and writes this node holds at once: a
     *                          write's from its frame to its store, a read's from the store to its
     *                          answer's frame written; bounded apart from the clients' values, as
     *                          requests are
     * @param readWait          how long a read's answer may wait on a storage thread for room in
     *                          maxBytes before it is refused as overloaded: the peers' replication
     *                          timeout, after which they no longer wait for it
     * @param handshakeTimeout  how long a new connection has to prove the secret
     */
    public record Settings(int port, Handshake handshake, int maxKeyLength, int maxRecordLength, int maxRequests,
            long maxBytes, Duration readWait, Duration handshakeTimeout) {

        /** The largest frame: the longest key with the largest record, or a full batch. */
        int maxFrame() {
            return Wire.maxFrame(maxKeyLength, maxRecordLength);
        }
    }

    final Settings settings;
    final PeerService service;
    final Scheduler storage;
    final Handshake handshake;
    final AtomicInteger inFlight = new AtomicInteger();
    final ByteBound bytesInFlight;
    /** Connections from peers that passed the handshake and are open. */
    final AtomicInteger peerConnections = new AtomicInteger();
    final Counter refusedPeers;
    /** Remote addresses whose refusal was logged: a peer retrying with a wrong secret is logged once. */
    private final Set<String> refusalsLogged = ConcurrentHashMap.newKeySet();
    private final DisposableServer server;

    /**
     * @param customizer changes the server before it binds, as Spring Boot's NettyServerCustomizer
     *                   does the public one's: the tests' fault injection adds to its pipeline
     */
    public PeerServer(Settings settings, PeerService service, Scheduler storage, LoopResources loops, MeterRegistry meters,
            UnaryOperator<TcpServer> customizer) {
        this.settings = settings;
        this.service = service;
        this.storage = storage;
        this.handshake = settings.handshake();
        this.refusedPeers = Counter.builder("ringkv.peer.connections.refused")
                .description("Connections to the cluster port that failed the handshake (a wrong or missing secret)")
                .register(meters);
        Gauge.builder("ringkv.peer.connections", peerConnections, AtomicInteger::get)
                .description("Connections from peers that passed the handshake, open now")
                .register(meters);
        Gauge.builder("ringkv.replica.requests.inflight", inFlight, AtomicInteger::get)
                .description("Requests from peers this node is working on")
                .register(meters);
        this.bytesInFlight = new ByteBound(settings.maxBytes());
        Gauge.builder("ringkv.replica.bytes.inflight", bytesInFlight, ByteBound::held)
                .description("Bytes of values in peers' writes this node is storing and in reads it is answering")
                .baseUnit("bytes")
                .register(meters);
        Gauge.builder("ringkv.replica.requests.limit", settings::maxRequests)
                .description("Requests from peers this node works on at most")
                .register(meters);
        this.server = customizer.apply(TcpServer.create()
                .runOn(loops)
                .port(settings.port())
                // Set up when the channel is created, so that the session sees it become active; before
                // Reactor Netty's own bridge, which would take the frames for a reactive stream.
                .doOnChannelInit((observer, channel, address) -> channel.pipeline()
                        // Answers written while the loop is busy go out together, in one system call.
                        .addFirst("ringkv.flush", new FlushConsolidationHandler(256, true))
                        .addBefore(NettyPipeline.ReactiveBridge, "ringkv.frames", new FrameDecoder(settings.maxFrame()))
                        .addBefore(NettyPipeline.ReactiveBridge, "ringkv.session", new ServerSession(this)))
                .handle((in, out) -> Mono.never()))
                .bindNow();
        log.info("answering peers on port {}", port());
    }

    /** The port it listens on: the configured one, or the free one it took. */
    public int port() {
        return ((InetSocketAddress) server.address()).getPort();
    }

    /** Logs a refused peer once per address (and counts every refusal). */
    void refused(String remote, String reason) {
        refusedPeers.increment();
        if (refusalsLogged.add(remote)) {
            log.warn("refused a connection from {}: {} (further refusals from it are only counted)", remote, reason);
        }
    }

    /** Called when a peer from that address proved the secret: a later refusal is news again. */
    void accepted(String remote) {
        refusalsLogged.remove(remote);
    }

    @Override
    public void close() {
        server.disposeNow(Duration.ofSeconds(5));
    }
}
