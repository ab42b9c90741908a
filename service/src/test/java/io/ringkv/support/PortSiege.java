package io.ringkv.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * An attacker with neither a certificate nor the cluster secret, at a cluster port: it holds
 * connections that never finish a handshake, each one first sending one of the openings it is
 * given in turn (nothing, the start of a TLS ClientHello, half a handshake frame) and then stalling,
 * and reopens every connection the node closes, one every few milliseconds, until it is closed.
 */
public final class PortSiege implements AutoCloseable {

    /** The pause after each reopened connection: a steady churn of a few hundred connections a second. */
    private static final Duration REOPEN_PAUSE = Duration.ofMillis(5);

    private final InetSocketAddress port;
    private final byte[][] openings;
    /** Filled before the siege's thread starts, then touched by it alone until {@link #close}. */
    private final List<SocketChannel> held = new ArrayList<>();
    private final Thread siege;
    private volatile boolean running = true;

    /** Opens all the connections, in order, before it returns: the node accepts them before any opened later. */
    public PortSiege(int port, int connections, byte[]... openings) {
        this.port = new InetSocketAddress("127.0.0.1", port);
        this.openings = openings;
        for (int i = 0; i < connections; i++) {
            held.add(open(i));
        }
        siege = Thread.ofPlatform().daemon().name("port-siege").start(this::reopenClosed);
    }

    private SocketChannel open(int index) {
        try {
            SocketChannel channel = SocketChannel.open(port);
            channel.write(ByteBuffer.wrap(openings[index % openings.length]));
            channel.configureBlocking(false);
            return channel;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void reopenClosed() {
        ByteBuffer discarded = ByteBuffer.allocate(4096);
        try {
            while (running) {
                for (int i = 0; i < held.size() && running; i++) {
                    if (closedByNode(held.get(i), discarded)) {
                        held.get(i).close();
                        held.set(i, open(i));
                        Thread.sleep(REOPEN_PAUSE);
                    }
                }
                Thread.sleep(1);
            }
        } catch (IOException | UncheckedIOException | InterruptedException e) {
            // the node is gone, or the test ends the siege
        }
    }

    /** Whether the node closed the connection; what it sent (a greeting) is read and dropped. */
    private static boolean closedByNode(SocketChannel channel, ByteBuffer discarded) {
        try {
            int read;
            do {
                discarded.clear();
                read = channel.read(discarded);
            } while (read > 0);
            return read < 0;
        } catch (IOException reset) {
            return true;
        }
    }

    @Override
    public void close() throws InterruptedException, IOException {
        running = false;
        siege.join(Duration.ofSeconds(5));
        for (SocketChannel channel : held) {
            channel.close();
        }
    }
}
