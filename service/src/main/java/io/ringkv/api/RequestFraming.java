package io.ringkv.api;

import org.springframework.boot.reactor.netty.NettyServerCustomizer;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.web.reactive.function.server.ServerRequest;

import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.util.AttributeKey;
import reactor.netty.Connection;
import reactor.netty.NettyPipeline;

/**
 * Sits between Netty's HTTP decoder and Reactor Netty, for two framing faults they let through.
 * A chunked body whose framing breaks (a bad chunk size, a chunk longer than it said) is answered
 * 400 by Reactor Netty, but the body stream still ends as if complete, holding what had arrived:
 * the handler would store an empty or cut-off value. This marks the connection, and
 * {@link #bodyBroken} tells the handler. And a transfer coding other than plain {@code chunked}
 * ({@code gzip, chunked}) would be stored still encoded: such a request fails to decode here, so
 * Reactor Netty answers it 400 before any handler runs.
 */
@ChannelHandler.Sharable
final class RequestFraming extends ChannelInboundHandlerAdapter {

    private static final AttributeKey<Boolean> BODY_BROKEN = AttributeKey.valueOf(RequestFraming.class.getName());
    private static final RequestFraming INSTANCE = new RequestFraming();

    /** Puts the check into every connection of the public server. */
    static NettyServerCustomizer customizer() {
        return server -> server.doOnChannelInit((observer, channel, address) -> {
            if (channel.pipeline().get(NettyPipeline.HttpCodec) != null) {
                channel.pipeline().addAfter(NettyPipeline.HttpCodec, "ringkv.requestFraming", INSTANCE);
            }
        });
    }

    /** Whether the body of this request stopped at a framing error rather than at its end. */
    static boolean bodyBroken(ServerRequest request) {
        Object nativeRequest = ServerHttpRequestDecorator.getNativeRequest(request.exchange().getRequest());
        return nativeRequest instanceof Connection connection
                && Boolean.TRUE.equals(connection.channel().attr(BODY_BROKEN).get());
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object message) {
        if (message instanceof HttpRequest request) {
            ctx.channel().attr(BODY_BROKEN).set(Boolean.FALSE);
            String coding = request.headers().get(HttpHeaderNames.TRANSFER_ENCODING);
            if (coding != null && request.decoderResult().isSuccess()
                    && !HttpHeaderValues.CHUNKED.contentEqualsIgnoreCase(coding.strip())) {
                request.setDecoderResult(DecoderResult.failure(
                        new IllegalArgumentException("unsupported Transfer-Encoding: " + coding)));
            }
        } else if (message instanceof HttpContent content && content.decoderResult().isFailure()) {
            ctx.channel().attr(BODY_BROKEN).set(Boolean.TRUE);
        }
        ctx.fireChannelRead(message);
    }
}
