package io.ringkv.api;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.reactor.netty.NettyServerCustomizer;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.server.ServerWebExchange;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.util.AttributeKey;
import io.ringkv.logging.RateLimitedLog;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.netty.Connection;
import reactor.netty.NettyPipeline;
import reactor.netty.http.server.HttpServerResponse;

/**
 * What the API needs from a client's connection below WebFlux, in a handler between Netty's HTTP
 * decoder and Reactor Netty.
 *
 * <p><b>Framing.</b> A chunked body whose framing breaks (a bad chunk size, a chunk longer than
 * it said) is answered 400 by Reactor Netty, but the body stream still ends as if complete,
 * holding what had arrived: a PUT would store an empty or cut-off value. The connection is marked,
 * and {@link #bodyBroken} tells the handler. A transfer coding other than plain {@code chunked}
 * ({@code gzip, chunked}) would be stored still encoded, and a second {@code Transfer-Encoding}
 * header ({@code chunked}, then {@code identity}) lets a proxy that honours the last one frame the
 * request differently (smuggling): every request but one with exactly one header saying
 * {@code chunked} fails to decode here, so Reactor Netty answers it 400 before any handler runs.
 *
 * <p><b>Logs.</b> Requests refused as malformed are logged at most once per {@link #LOG_EVERY},
 * with a count and without the request: a flood of them cannot flood the log, and what a client
 * sent (a token in a query, say) never reaches it.
 *
 * <p><b>Writability.</b> Reactor Netty writes up to 128 items of a streamed body into the
 * connection whether or not the client reads them; with values of megabytes that is hundreds of
 * megabytes of direct memory per slow client. {@link #whenWritable} lets a stream produce its next
 * item only once the connection has room (Netty's write buffer below its high-water mark).
 */
@ChannelHandler.Sharable
final class ConnectionHooks extends ChannelInboundHandlerAdapter {

    private static final AttributeKey<Boolean> BODY_BROKEN = AttributeKey.valueOf(ConnectionHooks.class.getName() + ".bodyBroken");
    /** Streams waiting for room; touched only on the channel's event loop. */
    private static final AttributeKey<ArrayDeque<MonoSink<Void>>> WAITING =
            AttributeKey.valueOf(ConnectionHooks.class.getName() + ".waiting");
    private static final Duration LOG_EVERY = Duration.ofSeconds(10);
    private static final Logger log = LoggerFactory.getLogger(ConnectionHooks.class);
    private static final RateLimitedLog malformedLog = new RateLimitedLog(LOG_EVERY, System::nanoTime);
    private static final ConnectionHooks INSTANCE = new ConnectionHooks();

    /** Puts the hooks into every connection of the public server. */
    static NettyServerCustomizer customizer() {
        return server -> server.doOnChannelInit((observer, channel, address) -> {
            if (channel.pipeline().get(NettyPipeline.HttpCodec) != null) {
                channel.pipeline().addAfter(NettyPipeline.HttpCodec, "ringkv.connectionHooks", INSTANCE);
            }
        });
    }

    /** Whether the body of this request stopped at a framing error rather than at its end. */
    static boolean bodyBroken(ServerRequest request) {
        Channel channel = channel(request);
        return channel != null && Boolean.TRUE.equals(channel.attr(BODY_BROKEN).get());
    }

    /** Completes once the request's connection can take more of the response (or has closed). */
    static Mono<Void> whenWritable(ServerRequest request) {
        Channel channel = channel(request);
        if (channel == null || channel.isWritable() || !channel.isActive()) {
            return Mono.empty();
        }
        return Mono.create(sink -> channel.eventLoop().execute(() -> {
            if (channel.isWritable() || !channel.isActive()) {
                sink.success();
            } else {
                waiting(channel).add(sink);
            }
        }));
    }

    private static Channel channel(ServerRequest request) {
        Object nativeRequest = ServerHttpRequestDecorator.getNativeRequest(request.exchange().getRequest());
        return nativeRequest instanceof Connection connection ? connection.channel() : null;
    }

    private static ArrayDeque<MonoSink<Void>> waiting(Channel channel) {
        ArrayDeque<MonoSink<Void>> waiting = channel.attr(WAITING).get();
        if (waiting == null) {
            waiting = new ArrayDeque<>(1);
            channel.attr(WAITING).set(waiting);
        }
        return waiting;
    }

    private static void wake(Channel channel) {
        ArrayDeque<MonoSink<Void>> waiting = channel.attr(WAITING).get();
        for (MonoSink<Void> sink; waiting != null && (sink = waiting.poll()) != null; ) {
            sink.success();
        }
    }

    /**
     * Whether the request's answer was already sent below WebFlux: Reactor Netty answers 400 to a
     * request that fails to decode, even once its handler runs (a chunked body that breaks).
     */
    static boolean answeredBelow(ServerWebExchange exchange) {
        Object nativeRequest = ServerHttpRequestDecorator.getNativeRequest(exchange.getRequest());
        return nativeRequest instanceof HttpServerResponse response && response.hasSentHeaders();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object message) {
        if (message instanceof HttpRequest request) {
            ctx.channel().attr(BODY_BROKEN).set(Boolean.FALSE);
            List<String> codings = request.headers().getAll(HttpHeaderNames.TRANSFER_ENCODING);
            if (!codings.isEmpty() && request.decoderResult().isSuccess()
                    && (codings.size() > 1 || !HttpHeaderValues.CHUNKED.contentEqualsIgnoreCase(codings.get(0).strip()))) {
                request.setDecoderResult(DecoderResult.failure(
                        new IllegalArgumentException("unsupported Transfer-Encoding: " + codings)));
            }
            logIfMalformed(ctx, request.decoderResult());
        } else if (message instanceof HttpContent content && content.decoderResult().isFailure()) {
            ctx.channel().attr(BODY_BROKEN).set(Boolean.TRUE);
            logIfMalformed(ctx, content.decoderResult());
        }
        ctx.fireChannelRead(message);
    }

    /**
     * One line per {@link #LOG_EVERY} at most, with a count, for requests refused as malformed
     * (Reactor Netty's own line, with the request as received, is turned off in application.yml):
     * the error's type only, as its message quotes the client's bytes.
     */
    private static void logIfMalformed(ChannelHandlerContext ctx, DecoderResult result) {
        if (result.isFailure()) {
            long suppressed = malformedLog.record();
            if (suppressed >= 0) {
                log.warn("refused a malformed request from {}: {} ({} more refused since the last such line)",
                        ctx.channel().remoteAddress() instanceof InetSocketAddress from ? from.getHostString() : "?",
                        result.cause().getClass().getSimpleName(), suppressed);
            }
        }
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (ctx.channel().isWritable()) {
            wake(ctx.channel());
        }
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        wake(ctx.channel());
        ctx.fireChannelInactive();
    }
}
