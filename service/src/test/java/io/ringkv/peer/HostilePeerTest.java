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
import io.ringkv.peer.message.Digest;
import io.ringkv.peer.message.PeerMessage;
import io.ringkv.peer.message.PeerMessages;
import io.ringkv.peer.message.Ping;
import io.ringkv.peer.message.Repaired;
import io.ringkv.peer.message.Scan;
import io.ringkv.peer.message.Trust;
import io.ringkv.peer.message.Write;
import io.ringkv.peer.server.PeerServer;
import io.ringkv.peer.server.ServerSettings;
import io.ringkv.peer.wire.Handshake;
import io.ringkv.peer.wire.PeerStatus;
import io.ringkv.peer.wire.Wire;
import io.ringkv.record.Record;
import io.ringkv.support.PortSiege;
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
    /**
     * Longer than any test here: a connection that never finishes the handshake holds its slot
     * throughout, unless the node closes it to make room.
     */
    private static final Duration HANDSHAKE_TIMEOUT = Duration.ofMinutes(1);
    /** Half an AUTH frame: the length of a whole one, its type, and nothing more. */
    private static final byte[] HALF_A_FRAME = {0, 0, 1, 0, Wire.AUTH};

    private final LoopResources loops = LoopResources.create("hostile-test", 2, true);
    private final Scheduler storage = Schedulers.newBoundedElastic(4, 100_000, "hostile-test-storage");
    private final MemoryStore store = new MemoryStore();
    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private final PeerServer server = new PeerServer(new ServerSettings(0, new Handshake(SECRET), 1024, 1 << 20, 10_000,
            64L << 20, Duration.ofSeconds(2), HANDSHAKE_TIMEOUT), store, storage, loops, meters, UnaryOperator.identity());

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
                16 * 1024, 1024, 1 << 20, Duration.ofSeconds(1), 0), loops, new NodeInfoClient(loops, Duration.ofSeconds(2),
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
            stranger.send(Ping.frame(ByteBufAllocator.DEFAULT, 1, new PeerStatus(1, Long.MAX_VALUE, 0), 0));
            assertThat(answerType(stranger)).isEqualTo(Wire.DONE);
        }
        assertThat(store.heard).as("what the stranger told is not heard").hasValue(PeerStatus.UNKNOWN);
        stillServes("after-ping");
    }

    @Test
    void aStrangerNeitherWritesNorReportsRepairs() throws IOException {
        try (var stranger = new HandshakenSocket(server.port(), SECRET, STRANGER)) {
            stranger.send(Repaired.frame(ByteBufAllocator.DEFAULT, 1, Long.MAX_VALUE));
            assertThat(answerType(stranger)).isEqualTo(Wire.ERROR);
            stranger.send(Write.frame(ByteBufAllocator.DEFAULT, 2, bytes("planted"), Record.value(1, bytes("x"))));
            assertThat(answerType(stranger)).isEqualTo(Wire.ERROR);
        }
        assertThat(store.repairedBy).hasNullValue();
        assertThat(store.get(bytes("planted"))).isNull();
        stillServes("after-repaired");
    }

    /**
     * Trust is closed by default: every message of the table that only members may send is
     * refused to a caller with the secret whose name is on no ring, before its payload is read
     * (an empty one would be malformed), and a type byte the table lacks is served to no one.
     */
    @Test
    void aStrangerIsRefusedEveryMembersOnlyMessageAndEveryUnknownOne() throws IOException {
        try (var stranger = new HandshakenSocket(server.port(), SECRET, STRANGER)) {
            int id = 0;
            for (PeerMessage message : PeerMessages.ALL) {
                if (message.trust() == Trust.MEMBERS) {
                    stranger.send(Wire.empty(ByteBufAllocator.DEFAULT, message.type(), ++id));
                    assertThat(errorText(stranger, Wire.ErrorCode.BAD_REQUEST)).as("%s", message).contains("not a member");
                }
            }
            for (int type = 0; type < 256; type++) {
                if (PeerMessages.of((byte) type).isEmpty()) {
                    stranger.send(Wire.empty(ByteBufAllocator.DEFAULT, (byte) type, ++id));
                    assertThat(errorText(stranger, Wire.ErrorCode.UNKNOWN_MESSAGE)).as("type %d", type).contains("not in protocol");
                }
            }
        }
        assertThat(store.repairedBy).hasNullValue();
        stillServes("after-refusals");
    }

    /** The next frame, which must be an error with this code: its message. */
    private static String errorText(HandshakenSocket socket, Wire.ErrorCode code) throws IOException {
        ByteBuf frame = HandshakenSocket.readFrame(socket.in);
        try {
            assertThat(frame.readByte()).isEqualTo(Wire.ERROR);
            frame.readInt();
            assertThat(Wire.ErrorCode.of(frame.readUnsignedShort())).isEqualTo(code);
            return Wire.readText(frame);
        } finally {
            frame.release();
        }
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
                greedy.send(Scan.request(new byte[0], null).open(ByteBufAllocator.DEFAULT, id, 0));
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
            greedy.send(Digest.frame(ByteBufAllocator.DEFAULT, 1, intervals));
            assertThat(answerType(greedy)).isEqualTo(Wire.ERROR);
            greedy.send(Digest.frame(ByteBufAllocator.DEFAULT, 2, new long[] {0, 1}));
            assertThat(answerType(greedy)).isEqualTo(Digest.DIGESTS);
        }
    }

    /**
     * 100 connections that never finish the handshake, idle or stalled halfway through a frame:
     * the node holds at most its bound of them, the oldest closed (and counted as refused) to make
     * room for the newer, and a member, newest of all and quick, gets in at once.
     */
    @Test
    void connectionsThatNeverFinishTheHandshakeKeepNoMemberOut() throws IOException {
        List<Socket> stalled = new ArrayList<>();
        try {
            for (int i = 0; i < 100; i++) {
                Socket socket = new Socket("127.0.0.1", server.port());
                if (i % 2 == 1) {
                    socket.getOutputStream().write(HALF_A_FRAME);
                }
                stalled.add(socket);
            }
            stillServes("past-stalled-connections");
            int madeRoom = 100 + 1 - ServerSettings.MAX_CONNECTIONS_IN_HANDSHAKE; // the member's connection is the 101st
            Awaitility.await().atMost(WAIT).untilAsserted(() ->
                    assertThat(meters.get("ringkv.peer.connections.refused").counter().count()).isEqualTo(madeRoom));
        } finally {
            for (Socket socket : stalled) {
                socket.close();
            }
        }
    }

    /** Connections that never finish the handshake, each reopened as soon as the node closes it: members still get in, each time. */
    @Test
    void connectionsReopenedAsTheNodeClosesThemKeepNoMemberOut() throws Exception {
        try (var siege = new PortSiege(server.port(), 80, new byte[0], HALF_A_FRAME)) {
            for (int i = 0; i < 3; i++) {
                stillServes("under-siege-" + i);
            }
        }
    }
}
