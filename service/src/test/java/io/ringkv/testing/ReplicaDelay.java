package io.ringkv.testing;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.ringkv.peer.message.Digest;
import io.ringkv.peer.message.Read;
import io.ringkv.peer.message.ReadBatch;
import io.ringkv.peer.server.PeerServerCustomizer;
import io.ringkv.peer.wire.Wire;

/**
 * A slow node, for tests: with {@code ringkv.testing.replica-delay} set, every answer the node
 * gives its peers to a point request (a read, a write, a ping, a digest) goes out that much later;
 * the handshake and range streams are not delayed. It is no part of the node: it comes with the
 * test classes, as an auto-configuration, which a node started in the tests' JVM finds on its
 * class path and a packaged node through Spring Boot's {@code loader.path} (see loadtest/run.sh).
 */
@AutoConfiguration
@ConditionalOnProperty("ringkv.testing.replica-delay")
@EnableConfigurationProperties(ReplicaDelay.Settings.class)
public class ReplicaDelay {

    /**
     * The setting, declared so that a node with this class on its class path knows it
     * (io.ringkv.settings.UnknownSettings); a node without it refuses it as unknown.
     */
    @ConfigurationProperties("ringkv.testing")
    public record Settings(Duration replicaDelay) {
    }

    @Bean
    PeerServerCustomizer replicaDelay(Settings settings) {
        return delaying(settings.replicaDelay());
    }

    /** A cluster port whose answers to point requests go out {@code delay} late. */
    public static PeerServerCustomizer delaying(Duration delay) {
        return server -> server.doOnChannelInit((observer, channel, address) ->
                channel.pipeline().addFirst("ringkv.testing.replica-delay", new DelayedAnswers(delay)));
    }

    /** Holds back the frames that answer point requests; on the connection's event loop, as writes are. */
    private static final class DelayedAnswers extends ChannelOutboundHandlerAdapter {

        private static final Set<Byte> ANSWERS = Set.of(Read.RECORD, Read.NOT_FOUND, Wire.DONE, Wire.ERROR, Digest.DIGESTS, ReadBatch.RECORDS);
        /** A frame starts with its length (an int), then its type. */
        private static final int TYPE_OFFSET = Integer.BYTES;

        private final Duration delay;

        DelayedAnswers(Duration delay) {
            this.delay = delay;
        }

        @Override
        public void write(ChannelHandlerContext context, Object message, ChannelPromise promise) {
            if (message instanceof ByteBuf frame && !delay.isZero()
                    && ANSWERS.contains(frame.getByte(frame.readerIndex() + TYPE_OFFSET))) {
                context.executor().schedule(() -> context.writeAndFlush(frame, promise), delay.toNanos(), TimeUnit.NANOSECONDS);
            } else {
                context.write(message, promise);
            }
        }
    }
}
