package io.ringkv.peer;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.ringkv.peer.PeerProtocolTest.HandshakenSocket;
import io.ringkv.peer.PeerProtocolTest.MemoryStore;
import io.ringkv.peer.client.ClientSecurity;
import io.ringkv.peer.client.ConnectionSettings;
import io.ringkv.peer.client.NodeInfoClient;
import io.ringkv.peer.client.PeerClient;
import io.ringkv.peer.client.PeerConnector;
import io.ringkv.peer.server.PeerServer;
import io.ringkv.peer.server.ServerSettings;
import io.ringkv.peer.wire.Handshake;
import io.ringkv.peer.wire.PeerStatus;
import io.ringkv.peer.wire.Wire;
import io.ringkv.storage.Record;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.netty.resources.LoopResources;

/**
 * Peers that know the secret, or only the port, and try to harm the node over the real protocol:
 * the node stays up and serving, changes nothing for them, and holds no more than its bounds.
 */
class HostilePeerTest {

    private static final String SECRET = "protocol-test-secret";
    private static final String MEMBER = "http://node-a:1";
    private static final String STRANGER = "http://on-no-ring:1";
    private static final Duration WAIT = Duration.ofSeconds(8);

    private final LoopResources loops = LoopResources.create("hostile-test", 2, true);
    private final Scheduler storage = Schedulers.newBoundedElastic(4, 100_000, "hostile-test-storage");
    private final MemoryStore store = new MemoryStore();
    private final PeerServer server = new PeerServer(new ServerSettings(0, new Handshake(SECRET), 1024, 1 << 20, 10_000,
            64L << 20, Duration.ofSeconds(2), Duration.ofSeconds(2)), store, storage, loops, new SimpleMeterRegistry(),
            UnaryOperator.identity());

    @AfterEach
    void stop() {
        server.close();
        storage.dispose();
        loops.disposeLater(Duration.ZERO, Duration.ofSeconds(5)).block(Duration.ofSeconds(6));
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    /** The node still serves a member: a write and a read back over a fresh connection. */
    private void stillServes(String key) {
        var connector = new PeerConnector(new ConnectionSettings(MEMBER, new Handshake(SECRET), Duration.ofSeconds(2), 1,
                16 * 1024, 1024, 1 << 20, Duration.ofSeconds(1)), loops, new NodeInfoClient(loops, Duration.ofSeconds(2),
                Duration.ofSeconds(1), ClientSecurity.PLAINTEXT), ClientSecurity.PLAINTEXT);
        PeerClient client = new PeerClient("http://node-b:1", new java.net.InetSocketAddress("127.0.0.1", server.port()),
                connector);
        client.write(bytes(key), Record.value(5, bytes("v"))).block(WAIT);
        assertThat(client.read(bytes(key)).block(WAIT)).contains(Record.value(5, bytes("v")));
    }

    /** The next frame's type, its payload skipped. */
    private static byte answerType(HandshakenSocket socket) throws IOException {
        ByteBuf frame = HandshakenSocket.readFrame(socket.in);
        byte type = frame.readByte();
        frame.release();
        return type;
    }

    @Test
    void aPingUnderANameOnNoRingIsAnsweredButNotHeard() throws IOException {
        try (var stranger = new HandshakenSocket(server.port(), SECRET, STRANGER)) {
            // A state and a horizon that, believed, would mark this store left.
            stranger.send(Wire.ping(ByteBufAllocator.DEFAULT, 1, new PeerStatus(1, Long.MAX_VALUE, 0)));
            assertThat(answerType(stranger)).isEqualTo(Wire.DONE);
        }
        assertThat(store.heard).as("what the stranger told is not heard").hasValue(PeerStatus.UNKNOWN);
        stillServes("after-ping");
    }

    @Test
    void aStrangerNeitherWritesNorReportsRepairs() throws IOException {
        try (var stranger = new HandshakenSocket(server.port(), SECRET, STRANGER)) {
            stranger.send(Wire.repaired(ByteBufAllocator.DEFAULT, 1, Long.MAX_VALUE));
            assertThat(answerType(stranger)).isEqualTo(Wire.ERROR);
            stranger.send(Wire.write(ByteBufAllocator.DEFAULT, 2, bytes("planted"), Record.value(1, bytes("x"))));
            assertThat(answerType(stranger)).isEqualTo(Wire.ERROR);
        }
        assertThat(store.repairedBy).hasNullValue();
        assertThat(store.get(bytes("planted"))).isNull();
        stillServes("after-repaired");
    }

    /** A name that is no member's URL (a line break, an '=') does not get past the handshake. */
    @Test
    void aHostileNameIsRefusedAtTheHandshake() {
        for (String name : List.of("http://a:1\nhttp://b:1=4102444800000", "http://a:1=9", "http://a:1\u0000")) {
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> new HandshakenSocket(server.port(), SECRET, name).close())
                    .as(name).isInstanceOf(AssertionError.class).hasMessageContaining(String.valueOf(Wire.REFUSED));
        }
        assertThat(store.repairedBy).hasNullValue();
        stillServes("after-names");
    }

    @Test
    void tenThousandScansWithoutCreditHoldAtMostTheBoundOfCursors() throws IOException {
        for (int i = 0; i < 100; i++) {
            store.put(bytes("k" + i), Record.value(1, new byte[100]));
        }
        try (var greedy = new HandshakenSocket(server.port(), SECRET, MEMBER)) {
            for (int id = 1; id <= 10_000; id++) {
                greedy.send(Wire.scan(ByteBufAllocator.DEFAULT, id, new byte[0], null, 0));
            }
            int refused = 0;
            while (refused < 10_000 - Wire.MAX_STREAMS_PER_CONNECTION) {
                assertThat(answerType(greedy)).isEqualTo(Wire.ERROR);
                refused++;
            }
            assertThat(store.openCursors.get()).isLessThanOrEqualTo(Wire.MAX_STREAMS_PER_CONNECTION);
            stillServes("during-scans");
        }
        Awaitility.await().atMost(WAIT).untilAsserted(() -> assertThat(store.openCursors.get()).isZero());
    }

    @Test
    void anOversizedDigestIsRefusedAndTheConnectionGoesOn() throws IOException {
        try (var greedy = new HandshakenSocket(server.port(), SECRET, MEMBER)) {
            long[] intervals = new long[2 * 65_535];
            for (int i = 0; i < intervals.length; i += 2) {
                intervals[i] = Long.MIN_VALUE;
                intervals[i + 1] = Long.MAX_VALUE;
            }
            greedy.send(Wire.digest(ByteBufAllocator.DEFAULT, 1, intervals));
            assertThat(answerType(greedy)).isEqualTo(Wire.ERROR);
            greedy.send(Wire.digest(ByteBufAllocator.DEFAULT, 2, new long[] {0, 1}));
            assertThat(answerType(greedy)).isEqualTo(Wire.DIGESTS);
        }
    }

    /** 500 connections that never say anything: past the bound they are closed at once, and members still get in. */
    @Test
    void aFloodOfConnectionsBeforeTheHandshakeIsShedAndMembersStillGetIn() throws IOException {
        List<Socket> flood = new ArrayList<>();
        try {
            for (int i = 0; i < 500; i++) {
                flood.add(new Socket("127.0.0.1", server.port()));
            }
            int closedAtOnce = 0;
            for (Socket socket : flood) {
                socket.setSoTimeout(1000);
                try {
                    if (socket.getInputStream().read() < 0) {
                        closedAtOnce++;
                    }
                } catch (java.net.SocketException reset) {
                    closedAtOnce++;
                } catch (java.net.SocketTimeoutException stillOpen) {
                    // neither greeted nor closed: cannot be, each either greets or is shed
                }
            }
            assertThat(closedAtOnce).as("connections closed without a greeting")
                    .isGreaterThanOrEqualTo(500 - ServerSettings.MAX_CONNECTIONS_IN_HANDSHAKE);
        } finally {
            for (Socket socket : flood) {
                socket.close();
            }
        }
        stillServes("after-flood");
    }
}
