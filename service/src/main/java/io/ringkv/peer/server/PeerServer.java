package io.ringkv.peer.server;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.channel.Channel;
import io.netty.handler.flush.FlushConsolidationHandler;
import io.ringkv.overload.ByteBound;
import io.ringkv.peer.wire.FrameDecoder;
import io.ringkv.peer.wire.Handshake;
import io.ringkv.peer.wire.Wire;
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

    /**
     * @param port              the cluster port; 0 takes a free one
     * @param handshake         the proof of the cluster secret
     * @param maxKeyLength      the longest key a peer may send
     * @param maxRecordLength   the largest record a peer may send
     * @param maxRequests       requests from peers in progress at once; past it their connections are read no further for now
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

    /** Connections not read while the requests in progress are past the bounds. */
    private final Set<Channel> paused = ConcurrentHashMap.newKeySet();

    /**
     * A request from the channel is in progress now, holding {@code bytes} of values: past the
     * bound on requests or bytes, the channel is read no further for now.
     */
    void started(Channel channel, long bytes) {
        int requests = inFlight.incrementAndGet();
        bytesInFlight.hold(bytes);
        if (requests > settings.maxRequests() || !bytesInFlight.hasRoomFor(0)) {
            channel.config().setAutoRead(false);
            paused.add(channel);
            // The requests that would resume it may all have ended meanwhile.
            resumeIfRoom();
        }
    }

    /** A request has ended and gives its bytes back; the paused connections are read again once half is free. */
    void ended(long bytes) {
        inFlight.decrementAndGet();
        released(bytes);
    }

    /** Bytes held for a request (a write's value, a read's answer) are given back. */
    void released(long bytes) {
        bytesInFlight.release(bytes);
        resumeIfRoom();
    }

    private void resumeIfRoom() {
        if (paused.isEmpty() || 2L * inFlight.get() > settings.maxRequests() || !bytesInFlight.hasRoomFor(settings.maxBytes() / 2)) {
            return;
        }
        for (Channel channel : List.copyOf(paused)) {
            if (paused.remove(channel)) {
                channel.eventLoop().execute(() -> {
                    channel.config().setAutoRead(true);
                    channel.read();
                });
            }
        }
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
