package io.ringkv.api;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;
import java.util.function.IntSupplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.availability.AvailabilityChangeEvent;
import org.springframework.boot.availability.ReadinessState;
import org.springframework.boot.reactor.netty.NettyServerCustomizer;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.core.Ordered;
import org.springframework.http.HttpHeaders;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

import io.netty.channel.Channel;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.util.AttributeKey;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.ringkv.lifecycle.Polling;
import io.ringkv.lifecycle.ShutdownWait;
import reactor.core.publisher.Mono;
import reactor.netty.Connection;
import reactor.netty.channel.ChannelOperations;

/**
 * The first thing a node does when told to stop: it turns unready and, for {@code drainDelay},
 * keeps serving every request while answering each with {@code Connection: close}. A client's
 * keep-alive connection is thus closed by the node after a complete answer, and the client's next
 * connection goes elsewhere: a Kubernetes Service drops the pod from its endpoints as soon as the
 * pod is terminating (and the readiness probe fails), a load balancer as soon as it sees the node
 * unready.
 *
 * <p>Then it closes the public port's listening socket, so that new connections are refused, and
 * waits until no request has been in progress for {@link #LAST_REQUESTS}, and every connection
 * accepted has brought its first request (or {@link #FIRST_REQUEST} has passed), before it closes
 * the connections left, all of them idle. A request on its way on a connection, which may be one
 * the client opened a moment before, is read and answered; Reactor Netty's own graceful shutdown
 * closes a connection at once unless a request on it is being processed, and a request that had
 * not been read yet failed with no answer. Clients that address the node directly (no Service in
 * between) meet it most.
 */
public final class ClientDrain extends ShutdownWait implements WebFilter, Ordered {

    private static final Logger log = LoggerFactory.getLogger(ClientDrain.class);
    /** How long the port must have had no request in progress, once it stopped accepting, before its idle connections close. */
    static final Duration LAST_REQUESTS = Duration.ofMillis(200);
    /**
     * How long a connection accepted just before the port stopped accepting may take to bring its
     * first request: its client opened it to send one, and a loaded machine may take its time.
     */
    static final Duration FIRST_REQUEST = Duration.ofSeconds(2);
    /** Set on a connection once a request came on it. */
    private static final AttributeKey<Boolean> SERVED = AttributeKey.valueOf(ClientDrain.class.getName() + ".served");

    private final Duration drainDelay;
    /** The longest the wait for requests in progress may take: Spring's own limit for a shutdown phase. */
    private final Duration inProgressLimit;
    private final ApplicationEventPublisher events;
    private final IntSupplier publicPort;
    /** Every server Reactor Netty bound with this customizer: the public one, and the management one if apart. */
    private final List<Channel> listeners = new CopyOnWriteArrayList<>();
    private final ChannelGroup connections = new DefaultChannelGroup("ringkv-clients", GlobalEventExecutor.INSTANCE);
    private volatile boolean draining;

    /**
     * @param drainDelay      how long the node serves, unready and closing connections, before it
     *                        stops taking them (0: no drain; Spring's graceful shutdown alone)
     * @param inProgressLimit how long requests still in progress then have to finish
     * @param publicPort      the port the public API listens on, known once it started
     */
    public ClientDrain(Duration drainDelay, Duration inProgressLimit, IntSupplier publicPort, ApplicationEventPublisher events) {
        this.drainDelay = drainDelay;
        this.inProgressLimit = inProgressLimit;
        this.publicPort = publicPort;
        this.events = events;
    }

    /**
     * Lets the drain see the listening sockets and the connections of the servers it customizes
     * (Spring Boot applies it to the management server too, when that has a port of its own).
     */
    public NettyServerCustomizer tracking() {
        return server -> server
                .doOnBound(bound -> listeners.add(bound.channel()))
                .doOnChannelInit((observer, channel, address) -> connections.add(channel));
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        if (ServerHttpRequestDecorator.getNativeRequest(exchange.getRequest()) instanceof Connection connection) {
            connection.channel().attr(SERVED).set(Boolean.TRUE);
        }
        if (draining) {
            exchange.getResponse().getHeaders().set(HttpHeaders.CONNECTION, "close");
        }
        return chain.filter(exchange);
    }

    /** Before {@link ExchangeCompletion}'s bookkeeping; it only sets a header. */
    @Override
    public int getOrder() {
        return Ordered.HIGHEST_PRECEDENCE;
    }

    /** Blocks the shutdown for the drain: nothing else stops before it. */
    @Override
    protected void awaitEnd() throws InterruptedException {
        draining = true;
        AvailabilityChangeEvent.publish(events, this, ReadinessState.REFUSING_TRAFFIC);
        Channel server = publicListener();
        if (drainDelay.isZero() || server == null) {
            return;
        }
        log.info("stopping: unready, closing client connections after their next answer for {} ms (ringkv.shutdown.drain-delay)",
                drainDelay.toMillis());
        try {
            Thread.sleep(drainDelay);
            server.close().await(LAST_REQUESTS.toMillis());
            awaitNoRequestInProgress(server);
        } finally {
            connections.close(connection -> connection.parent() == server);
        }
    }

    private Channel publicListener() {
        int port = publicPort.getAsInt();
        return listeners.stream()
                .filter(channel -> channel.localAddress() instanceof InetSocketAddress address && address.getPort() == port)
                .findFirst()
                .orElse(null);
    }

    /**
     * Until no connection to the server has had a request in progress for {@link #LAST_REQUESTS},
     * counting a connection that has not brought its first request yet (for up to
     * {@link #FIRST_REQUEST}) as one in progress; within the limit.
     */
    private void awaitNoRequestInProgress(Channel server) throws InterruptedException {
        long closed = System.nanoTime();
        BooleanSupplier inProgress = () -> {
            boolean waitForFirst = System.nanoTime() - closed < FIRST_REQUEST.toNanos();
            return connections.stream().anyMatch(connection -> connection.parent() == server && (ChannelOperations.get(connection) != null
                    || (waitForFirst && connection.attr(SERVED).get() == null)));
        };
        if (!Polling.awaitQuiet(inProgress, LAST_REQUESTS, inProgressLimit, Duration.ofMillis(20))) {
            log.warn("stopping: client requests still in progress after {} ms; their connections close now", inProgressLimit.toMillis());
        }
    }

    /** The first to stop: before the hand-over of a node scaled away, and before the web server's graceful shutdown. */
    @Override
    public int getPhase() {
        return Integer.MAX_VALUE;
    }
}
