package io.ringkv.peer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.UnaryOperator;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.ringkv.health.BreakerSettings;
import io.ringkv.health.PeerMonitor;
import io.ringkv.peer.client.NodeInfoClient;
import io.ringkv.peer.client.PeerClient;
import io.ringkv.peer.client.ClientSecurity;
import io.ringkv.peer.client.ConnectionSettings;
import io.ringkv.peer.client.PeerConnector;
import io.ringkv.peer.message.PeerService;
import io.ringkv.peer.message.Ping;
import io.ringkv.peer.message.Read;
import io.ringkv.peer.message.ReadBatch;
import io.ringkv.peer.message.RecordScan;
import io.ringkv.peer.message.WriteBatch;
import io.ringkv.peer.server.PeerServer;
import io.ringkv.peer.server.ServerSettings;
import io.ringkv.peer.wire.FrameDecoder;
import io.ringkv.peer.wire.Handshake;
import io.ringkv.peer.wire.PeerException;
import io.ringkv.peer.wire.PeerStatus;
import io.ringkv.peer.wire.Wire;
import io.ringkv.record.KeyedRecord;
import io.ringkv.record.Record;
import io.ringkv.record.RecordBatch;
import io.ringkv.replication.RemoteReplica;
import io.ringkv.replication.ReplicaWindow;
import io.ringkv.ring.HashRing;
import io.ringkv.ring.TokenIntervalSet;
import io.ringkv.storage.RecordCursor;
import io.ringkv.storage.RocksStore;
import io.ringkv.testing.ReplicaDelay;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.netty.resources.LoopResources;
import reactor.netty.tcp.TcpServer;
import reactor.test.StepVerifier;

/**
 * The node-to-node protocol between a real {@link PeerServer} and {@link PeerClient} on loopback,
 * over an in-memory store, and against hand-made peers that misbehave on the wire.
 */
class PeerProtocolTest {

    private static final String SECRET = "protocol-test-secret";
    private static final String SERVER = "http://node-b:1";
    private static final String CLIENT = "http://node-a:1";
    private static final Duration TIMEOUT = Duration.ofSeconds(2);
    /** How long the test waits for an outcome: longer than any timeout, so that the outcome is the node's. */
    private static final Duration WAIT = TIMEOUT.multipliedBy(4);
    private static final int MAX_VALUE = 64 * 1024;
    private static final int WINDOW = 16 * 1024;

    private final LoopResources loops = LoopResources.create("protocol-test", 2, true);
    private final Scheduler storage = Schedulers.newBoundedElastic(4, 1000, "protocol-test-storage");
    private final MemoryStore store = new MemoryStore();
    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private PeerServer server;

    @AfterEach
    void stop() {
        if (server != null) {
            server.close();
        }
        storage.dispose();
        loops.disposeLater(Duration.ZERO, Duration.ofSeconds(5)).block(Duration.ofSeconds(6));
    }

    private PeerServer server() {
        return server(UnaryOperator.identity());
    }

    private PeerServer server(UnaryOperator<TcpServer> customizer) {
        return server(customizer, 64L << 20);
    }

    private PeerServer server(UnaryOperator<TcpServer> customizer, long maxBytes) {
        server = new PeerServer(new ServerSettings(0, new Handshake(SECRET), 1024, MAX_VALUE + 10, 10_000, maxBytes,
                TIMEOUT, TIMEOUT), store, storage, loops, meters, customizer);
        return server;
    }

    private PeerClient client(String secret, int connections, InetSocketAddress address) {
        var connector = new PeerConnector(new ConnectionSettings(CLIENT, new Handshake(secret), TIMEOUT, connections,
                WINDOW, 1024, MAX_VALUE + 10, Duration.ofSeconds(1), 0), loops,
                new NodeInfoClient(loops, TIMEOUT, Duration.ofSeconds(1), ClientSecurity.PLAINTEXT), ClientSecurity.PLAINTEXT);
        return new PeerClient(SERVER, address, connector);
    }

    private PeerClient client() {
        return client(SECRET, 1, local(server.port()));
    }

    private static InetSocketAddress local(int port) {
        return new InetSocketAddress("127.0.0.1", port);
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void writesAndReadsRecordsWithTheirTimestamps() {
        server();
        PeerClient client = client();
        Record value = Record.value(42, bytes("hello"));
        client.write(bytes("k"), value).block(WAIT);
        assertThat(client.read(bytes("k")).block(WAIT)).contains(value);
        assertThat(client.read(bytes("absent")).block(WAIT)).isEmpty();
        client.write(bytes("k"), Record.tombstone(43)).block(WAIT);
        assertThat(client.read(bytes("k")).block(WAIT)).contains(Record.tombstone(43));
        client.ping(PeerStatus.UNKNOWN).block(WAIT);
    }

    /**
     * A thousand requests at once on one connection, answered in a random order (each storage call
     * sleeps a random while): every caller gets its own key's answer.
     */
    @Test
    void multiplexesManyRequestsOnOneConnectionAnsweredInAnyOrder() {
        server();
        PeerClient client = client();
        for (int i = 0; i < 1000; i++) {
            store.put(bytes("key" + i), Record.value(i, bytes("value" + i)));
        }
        store.jitter = true;
        List<String> answers = Flux.range(0, 1000)
                .flatMap(i -> client.read(bytes("key" + i)).map(found -> i + "=" + new String(found.orElseThrow().value(), StandardCharsets.UTF_8)), 1000)
                .collectList()
                .block(Duration.ofSeconds(30));
        assertThat(answers).hasSize(1000).allSatisfy(answer -> {
            String[] parts = answer.split("=");
            assertThat(parts[1]).isEqualTo("value" + parts[0]);
        });
        assertThat(store.reads.get()).isEqualTo(1000);
        assertThat(meters.get("ringkv.peer.connections").gauge().value()).as("connections open").isEqualTo(1);
    }

    @Test
    void streamsARangeInKeyOrderWithTombstones() {
        server();
        for (int i = 0; i < 500; i++) {
            store.put(bytes(String.format("r%04d", i)), i % 7 == 0 ? Record.tombstone(i) : Record.value(i, new byte[100]));
        }
        List<KeyedRecord> range = client().scan(bytes("r0100"), bytes("r0400")).collectList().block(Duration.ofSeconds(10));
        assertThat(range).hasSize(300);
        assertThat(range.get(0).key()).isEqualTo(bytes("r0100"));
        assertThat(range.get(299).key()).isEqualTo(bytes("r0399"));
        assertThat(range.get(5).record().tombstone()).isTrue(); // r0105 = 7 * 15
        assertThat(client().scan(bytes("s"), null).collectList().block(WAIT)).isEmpty();
    }

    /**
     * More ranges at once than one connection may carry (a coordinator serving many client
     * ranges): those past the bound wait until one ends, and every one completes. Before, the peer
     * refused them (BAD_REQUEST) and each such client range failed. Streams cancelled early, sent
     * or still waiting, give their turn to the next. (The server's cursors may briefly number more
     * than the bound: a cancelled stream's is closed on a storage thread as the next one opens.)
     */
    @Test
    void moreRangeStreamsThanAConnectionCarriesWaitTheirTurnAndAllComplete() {
        server();
        int records = 200;
        for (int i = 0; i < records; i++) {
            store.put(bytes(String.format("m%04d", i)), Record.value(i, new byte[1000]));
        }
        PeerClient client = client();
        int streams = Wire.MAX_STREAMS_PER_CONNECTION * 3;
        Mono<List<Long>> counts = Flux.range(0, streams)
                .flatMap(i -> i % 5 == 0 ? client.scan(bytes("m"), null).take(1).count() : client.scan(bytes("m"), null).count(),
                        streams)
                .collectList();
        List<Long> counted = counts.doOnSubscribe(ignored -> client.scan(bytes("m"), null).subscribe().dispose())
                .block(WAIT);
        assertThat(counted).hasSize(streams).allMatch(count -> count == 1 || count == records);
        assertThat(counted).filteredOn(count -> count == records).hasSize(streams - Math.ceilDiv(streams, 5));
        Awaitility.await().atMost(TIMEOUT).until(() -> store.openCursors.get() == 0);
    }

    /**
     * A consumer that takes one record at a time, slowly: the server reads its store only as far as
     * the credit the consumer gave back allows, so what waits in buffers stays within the window.
     */
    @Test
    void aSlowConsumerHoldsTheScanWithinItsCreditWindow() {
        server();
        int records = 2000;
        int valueSize = 1000;
        for (int i = 0; i < records; i++) {
            store.put(bytes(String.format("f%05d", i)), Record.value(i, new byte[valueSize]));
        }
        AtomicInteger consumed = new AtomicInteger();
        AtomicLong mostAhead = new AtomicLong();
        client().scan(bytes("f"), null)
                // One record at a time, each a millisecond late: the producer is far faster.
                .concatMap(record -> Mono.just(record).delayElement(Duration.ofMillis(1)), 1)
                .doOnNext(record -> {
                    int taken = consumed.incrementAndGet();
                    mostAhead.accumulateAndGet(store.cursorReads.get() - taken, Math::max);
                })
                .blockLast(Duration.ofSeconds(30));
        assertThat(consumed.get()).isEqualTo(records);
        // A record takes about valueSize + 30 bytes on the wire; the server may overshoot by a batch.
        long bound = (WINDOW + 64 * 1024) / valueSize + 2;
        assertThat(mostAhead.get()).as("records read from the store ahead of the consumer").isLessThanOrEqualTo(bound);
    }

    @Test
    void aPausedConsumerResumesAndTheStreamCompletes() {
        server();
        for (int i = 0; i < 300; i++) {
            store.put(bytes(String.format("p%04d", i)), Record.value(i, new byte[1000]));
        }
        StepVerifier.create(client().scan(bytes("p"), null), 10)
                .expectNextCount(10)
                .thenAwait(TIMEOUT.multipliedBy(2)) // longer than the timeout: pausing is not stalling
                .thenRequest(Long.MAX_VALUE)
                .expectNextCount(290)
                .verifyComplete();
        Awaitility.await().atMost(TIMEOUT).until(() -> store.openCursors.get() == 0);
    }

    /**
     * A range stream whose records take longer than the timeout to come (a batch read from a busy
     * disk) while its peer answers on the connection waits for them: it used to fail at the
     * timeout, and with it its client's range.
     */
    @Test
    void aRangeStreamFromABusyPeerWaitsLongerThanTheTimeout() {
        server();
        for (int i = 0; i < 50; i++) {
            store.put(bytes(String.format("b%04d", i)), Record.value(i, new byte[100]));
        }
        store.firstCursorReadDelay = TIMEOUT.multipliedBy(2).plusMillis(500);
        long started = System.nanoTime();
        StepVerifier.create(client().scan(bytes("b"), null))
                .expectNextCount(50)
                .expectComplete()
                .verify(WAIT);
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThan(TIMEOUT.multipliedBy(2));
    }

    /**
     * A request whose handling throws is answered with an error; the range stream sharing its
     * connection goes on. Before, the server closed the connection, and the streams on it failed.
     */
    @Test
    void aRequestThatFailsOnTheServerFailsAloneNotItsConnection() {
        server();
        for (int i = 0; i < 300; i++) {
            store.put(bytes(String.format("p%04d", i)), Record.value(i, new byte[1000]));
        }
        PeerClient client = client();
        StepVerifier.create(client.scan(bytes("p"), null), 10)
                .expectNextCount(10)
                .then(() -> {
                    store.cachedReadFailure = new IllegalStateException("a bug behind one request");
                    assertThatThrownBy(() -> client.read(bytes("p0001")).block(WAIT))
                            .isInstanceOf(PeerException.Remote.class)
                            .hasMessageContaining("INTERNAL")
                            .hasMessageContaining("a bug behind one request");
                    store.cachedReadFailure = null;
                })
                .thenRequest(Long.MAX_VALUE)
                .expectNextCount(290)
                .verifyComplete();
        assertThat(client.read(bytes("p0001")).block(WAIT)).contains(Record.value(1, new byte[1000]));
        assertThat(meters.get("ringkv.peer.connections").gauge().value()).as("connections open").isEqualTo(1);
    }

    @Test
    void cancellingAStreamClosesTheServersCursor() {
        server();
        for (int i = 0; i < 1000; i++) {
            store.put(bytes(String.format("c%04d", i)), Record.value(i, new byte[1000]));
        }
        assertThat(client().scan(bytes("c"), null).take(5).collectList().block(WAIT)).hasSize(5);
        Awaitility.await().atMost(TIMEOUT).until(() -> store.openCursors.get() == 0);
    }

    @Test
    void aWrongSecretIsRefusedAndNothingIsRead() {
        server();
        store.put(bytes("secret-data"), Record.value(1, bytes("x")));
        PeerClient intruder = client("not-" + SECRET, 1, local(server.port()));
        assertThatThrownBy(() -> intruder.read(bytes("secret-data")).block(WAIT))
                .isInstanceOf(PeerException.Refused.class)
                .hasMessageContaining("cluster secret");
        assertThat(store.reads.get()).isZero();
        assertThat(meters.get("ringkv.peer.connections.refused").counter().count()).isGreaterThanOrEqualTo(1);
    }

    /** A server that does not know the secret cannot pass itself off as a peer either. */
    @Test
    void aServerWithAnotherSecretIsNotTrusted() {
        server = new PeerServer(new ServerSettings(0, new Handshake("other-secret"), 1024, MAX_VALUE + 10, 100, 64L << 20,
                TIMEOUT, TIMEOUT), store, storage, loops, meters, UnaryOperator.identity());
        assertThatThrownBy(() -> client().read(bytes("k")).block(WAIT)).isInstanceOf(PeerException.Refused.class);
    }

    /** A connection that never proves the secret is closed after the handshake timeout. */
    @Test
    void aConnectionWithoutTheHandshakeIsClosed() throws IOException {
        server();
        try (Socket socket = new Socket("127.0.0.1", server.port())) {
            socket.setSoTimeout((int) TIMEOUT.multipliedBy(3).toMillis());
            InputStream in = socket.getInputStream();
            byte[] hello = in.readNBytes(Wire.HEADER + 6 + Handshake.NONCE_BYTES);
            assertThat(hello[Wire.LENGTH_FIELD]).isEqualTo(Wire.HELLO);
            assertThat(closedByPeer(in)).as("the server closed the connection").isTrue();
        }
    }

    /** A PING tells what the caller is besides its name (its zone), after the fields an older node reads. */
    @Test
    void aPingTellsTheCallersAttributes() {
        server();
        PeerStatus zoned = new PeerStatus(2, 77, 1_000, Map.of("zone", "zone-a"));
        assertThat(client().ping(zoned).block(WAIT)).as("a peer that tells none").isEqualTo(new PeerStatus(1, 42, 7));
        assertThat(store.heard).as("what the caller told about itself").hasValue(zoned);
    }

    /** Before the handshake a frame may be 4 KiB: a larger one ends the connection at once. */
    /** The messages repair is built on: a peer's status, digests, a token-ordered scan, a finished repair. */
    @Test
    void repairMessagesGoOverTheWire() {
        server();
        for (int i = 0; i < 50; i++) {
            store.put(bytes("t" + i), Record.value(i + 1, new byte[20]));
        }
        PeerClient client = client();
        assertThat(client.ping(new PeerStatus(2, 77, 1_000)).block(WAIT)).isEqualTo(new PeerStatus(1, 42, 7));
        assertThat(store.heard).as("what the caller told about itself").hasValue(new PeerStatus(2, 77, 1_000));
        assertThat(store.heardFrom).as("the caller's name on the ring, as its ledger is keyed").hasValue(CLIENT);
        long[] digests = client.digest(new long[] {Long.MIN_VALUE, -1, 0, Long.MAX_VALUE}).block(WAIT);
        assertThat(digests).hasSize(4);
        assertThat(digests[1] + digests[3]).as("keys in both halves of the token space").isEqualTo(50);
        assertThat(digests[0] + digests[2]).as("the sum of the timestamps").isEqualTo(50 * 51 / 2);
        List<KeyedRecord> scanned = client.tokenScan(Long.MIN_VALUE, Long.MAX_VALUE).collectList().block(WAIT);
        assertThat(scanned).extracting(entry -> HashRing.token(entry.key())).hasSize(50).isSorted();
        client.repaired(1234L).block(WAIT);
        assertThat(store.repairedAt).hasValue(1234L);
        assertThat(store.repairedBy).hasValue(CLIENT);
    }

    /** A member's SNAPSHOT reaches the service with the backup's id; its refusal comes back as the call's error, and only to members. */
    @Test
    void aSnapshotIsAskedOfTheServiceAndItsRefusalReachesTheCaller() {
        server();
        PeerClient client = client();

        client.snapshot("2026-11-29T16-31-05Z").block(WAIT);
        assertThat(store.snapshotsAsked).containsExactly(CLIENT + " 2026-11-29T16-31-05Z");

        store.snapshotRefusal = "backup 2026-11-29T16-31-05Z is still uploading";
        assertThatThrownBy(() -> client.snapshot("2026-11-29T16-31-06Z").block(WAIT)).hasMessageContaining("still uploading");

        store.snapshotRefusal = null;
        store.members.remove(CLIENT);
        assertThatThrownBy(() -> client.snapshot("2026-11-29T16-31-07Z").block(WAIT)).hasMessageContaining("not a member");
        assertThat(store.snapshotsAsked).hasSize(2);
    }

    /** Repair's batches: one frame stores many records; one answer reads many, in the order asked, absent keys skipped. */
    @Test
    void batchesOfRecordsGoInOneFrameEach() {
        server();
        PeerClient client = client();
        List<KeyedRecord> records = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            records.add(new KeyedRecord(bytes("b" + i), i % 10 == 0 ? Record.tombstone(i + 1) : Record.value(i + 1, bytes("v" + i))));
        }
        client.writeBatch(records).block(WAIT);
        for (KeyedRecord keyed : records) {
            assertThat(store.get(keyed.key())).isEqualTo(keyed.record());
        }
        List<byte[]> asked = new ArrayList<>();
        for (KeyedRecord keyed : records) {
            asked.add(keyed.key());
            asked.add(bytes("absent-" + asked.size()));
        }
        RecordBatch batch = client.readBatch(asked).block(WAIT);
        assertThat(batch.covered()).isEqualTo(asked.size());
        assertThat(batch.found()).extracting(keyed -> new String(keyed.key(), StandardCharsets.UTF_8))
                .containsExactlyElementsOf(records.stream().map(keyed -> new String(keyed.key(), StandardCharsets.UTF_8)).toList());
        assertThat(batch.found()).extracting(KeyedRecord::record)
                .containsExactlyElementsOf(records.stream().map(KeyedRecord::record).toList());
    }

    /** An answer holds what fits its bytes and says how many keys it covers; the caller asks again for the rest. */
    @Test
    void aReadBatchCoversOnlyWhatFitsItsBytes() {
        server();
        PeerClient client = client();
        List<byte[]> keys = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            keys.add(bytes("big" + i));
            store.put(keys.get(i), Record.value(1, new byte[60 * 1024]));
        }
        RecordBatch first = client.readBatch(keys).block(WAIT);
        assertThat(first.covered()).as("four values of 60 KiB fit a batch, five do not").isEqualTo(4);
        assertThat(first.found()).hasSize(4);
        RecordBatch rest = client.readBatch(keys.subList(4, 10)).block(WAIT);
        assertThat(rest.covered()).isEqualTo(4);
        assertThat(new String(rest.found().get(0).key(), StandardCharsets.UTF_8)).isEqualTo("big4");
    }

    /**
     * A batch is what a transfer asks for: it is held for the pace of the node that sends it, its
     * bytes reserved there, while the connection answers a client's read at once.
     */
    @Test
    void aReadBatchIsSentAtTheSendersTransferPace() {
        server();
        PeerClient client = client();
        List<KeyedRecord> records = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            records.add(new KeyedRecord(bytes("paced" + i), Record.value(i + 1, new byte[1000])));
            store.put(records.get(i).key(), records.get(i).record());
        }
        store.transferPace = Duration.ofMillis(700);
        long started = System.nanoTime();
        var batch = client.readBatch(records.stream().map(KeyedRecord::key).toList()).toFuture();
        assertThat(client.read(bytes("paced0")).block(WAIT)).contains(records.get(0).record());
        assertThat(batch).as("the read was answered while the batch is held").isNotDone();
        assertThat(batch.join().found()).hasSize(5);
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(Duration.ofMillis(700));
        assertThat(store.pacedBytes.get()).isEqualTo(RecordBatch.entrySizes(records));
    }

    /**
     * A record scan streams the whole records (tombstones included) of the keys in its intervals
     * and no others, at the sender's transfer pace: after each batch the stream waits its pace.
     */
    @Test
    void aRecordScanStreamsTheRecordsOfItsIntervalsAtTheSendersPace() {
        server();
        Map<String, Record> inside = new HashMap<>();
        long[] intervals = {Long.MIN_VALUE, Long.MIN_VALUE / 2, 0, Long.MAX_VALUE / 2};
        TokenIntervalSet wanted = TokenIntervalSet.of(intervals);
        for (int i = 0; i < 400; i++) {
            byte[] key = bytes("r" + i);
            Record record = i % 7 == 0 ? Record.tombstone(i + 1) : Record.value(i + 1, new byte[1000]);
            store.put(key, record);
            if (wanted.contains(HashRing.token(key))) {
                inside.put("r" + i, record);
            }
        }
        assertThat(inside).hasSizeBetween(100, 300);
        store.transferPace = Duration.ofMillis(100);
        long started = System.nanoTime();
        List<KeyedRecord> streamed = client().recordScan(intervals).collectList().block(WAIT);
        Map<String, Record> got = new HashMap<>();
        streamed.forEach(keyed -> got.put(new String(keyed.key(), StandardCharsets.UTF_8), keyed.record()));
        assertThat(streamed).as("each key once").hasSameSizeAs(got.keySet());
        assertThat(got).isEqualTo(inside);
        assertThat(store.pacedBytes.get()).as("every byte sent was paced").isEqualTo(RecordBatch.entrySizes(streamed));
        // Batches of 64 KiB: at least three of them, each followed by its 100 ms.
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(Duration.ofMillis(300));
    }

    /** A record scan with a malformed interval, or too many, is refused; the connection goes on. */
    @Test
    void aMalformedRecordScanIsABadRequestAndTheConnectionGoesOn() {
        server();
        store.put(bytes("k"), Record.value(1, bytes("v")));
        PeerClient client = client();
        assertThatThrownBy(() -> client.recordScan(new long[] {5, 4}).collectList().block(WAIT))
                .isInstanceOfSatisfying(PeerException.Remote.class, remote -> {
                    assertThat(remote.code()).isEqualTo(Wire.ErrorCode.BAD_REQUEST);
                    assertThat(remote.getMessage()).contains("ends before it starts");
                });
        long[] tooMany = new long[2 * (ServerSettings.MAX_INTERVALS + 1)];
        for (int i = 0; i < tooMany.length; i += 2) {
            tooMany[i] = 10L * i;
            tooMany[i + 1] = 10L * i + 1;
        }
        assertThatThrownBy(() -> client.recordScan(tooMany).collectList().block(WAIT))
                .isInstanceOfSatisfying(PeerException.Remote.class,
                        remote -> assertThat(remote.code()).isEqualTo(Wire.ErrorCode.BAD_REQUEST));
        assertThat(client.read(bytes("k")).block(WAIT)).contains(Record.value(1, bytes("v")));
    }

    @Test
    void aReadBatchOfTooManyKeysIsABadRequestAndTheConnectionGoesOn() {
        server();
        PeerClient client = client();
        List<byte[]> keys = new ArrayList<>();
        for (int i = 0; i <= RecordBatch.MAX_KEYS; i++) {
            keys.add(bytes("k" + i));
        }
        assertThatThrownBy(() -> client.readBatch(keys).block(WAIT))
                .isInstanceOf(PeerException.Remote.class)
                .hasMessageContaining("BAD_REQUEST")
                .hasMessageContaining("at most " + RecordBatch.MAX_KEYS);
        assertThat(client.readBatch(keys.subList(0, 3)).block(WAIT).covered()).isEqualTo(3);
    }

    /** A peer of protocol version 1 does not know the batches: repair's calls fall back to one record at a time. */
    @Test
    void aPeerOfVersionOneGetsRecordsOneByOne() {
        server(tcp -> tcp.doOnChannelInit((observer, channel, address) ->
                channel.pipeline().addAfter("ringkv.frames", "version-1", new VersionOnePeer())));
        PeerClient client = client();
        var replica = new RemoteReplica(client, new PeerMonitor(SERVER,
                new BreakerSettings(10, 5, 50, Duration.ofSeconds(5), 100, Duration.ofMinutes(1), 1), meters),
                new ReplicaWindow(16, 1 << 20));
        List<KeyedRecord> records = List.of(new KeyedRecord(bytes("old-a"), Record.value(5, bytes("a"))),
                new KeyedRecord(bytes("old-b"), Record.tombstone(6)));
        assertThatThrownBy(() -> client.writeBatch(records).block(WAIT)).hasMessageContaining("UNKNOWN_MESSAGE");
        replica.writeBatch(records).block(WAIT);
        assertThat(store.get(bytes("old-a"))).isEqualTo(Record.value(5, bytes("a")));
        assertThat(store.get(bytes("old-b"))).isEqualTo(Record.tombstone(6));
        RecordBatch batch = replica.readBatch(List.of(bytes("old-a"), bytes("absent"), bytes("old-b"))).block(WAIT);
        assertThat(batch.covered()).isEqualTo(3);
        assertThat(batch.found()).extracting(KeyedRecord::record).containsExactly(Record.value(5, bytes("a")), Record.tombstone(6));
    }

    /** Answers the batch messages as a node of protocol version 1 would: a type it does not know. */
    /** A peer that does not know RECORD_SCAN refuses it in a way the caller takes for an older peer, and walks key by key. */
    @Test
    void aPeerThatDoesNotKnowARecordScanIsTakenForAnOlderOne() {
        server(tcp -> tcp.doOnChannelInit((observer, channel, address) ->
                channel.pipeline().addAfter("ringkv.frames", "version-1", new VersionOnePeer())));
        store.put(bytes("k"), Record.value(1, bytes("v")));
        PeerClient client = client();
        assertThatThrownBy(() -> client.recordScan(new long[] {Long.MIN_VALUE, Long.MAX_VALUE}).collectList().block(WAIT))
                .satisfies(error -> assertThat(RemoteReplica.speaksOlderProtocol(error)).isTrue());
        assertThat(client.read(bytes("k")).block(WAIT)).as("the connection goes on").contains(Record.value(1, bytes("v")));
    }

    private static final class VersionOnePeer extends io.netty.channel.ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(io.netty.channel.ChannelHandlerContext context, Object message) {
            ByteBuf frame = (ByteBuf) message;
            byte type = frame.getByte(frame.readerIndex());
            if (type == WriteBatch.TYPE || type == ReadBatch.TYPE || type == RecordScan.TYPE) {
                int id = frame.getInt(frame.readerIndex() + 1);
                frame.release();
                context.writeAndFlush(Wire.error(context.alloc(), id, Wire.ErrorCode.UNKNOWN_MESSAGE, "not in version 1"));
            } else {
                context.fireChannelRead(message);
            }
        }
    }

    @Test
    void aFrameOverTheLimitEndsTheConnection() throws IOException {
        server();
        try (Socket socket = new Socket("127.0.0.1", server.port())) {
            socket.setSoTimeout((int) TIMEOUT.toMillis());
            DataOutputStream out = new DataOutputStream(socket.getOutputStream());
            out.writeInt(FrameDecoder.HANDSHAKE_LIMIT + 1);
            out.write(new byte[64]);
            out.flush();
            assertThat(closedByPeer(socket.getInputStream())).as("the server closed the connection").isTrue();
        }
        // Once authenticated, a record above the largest is refused at once, and the connection goes on.
        PeerClient client = client();
        assertThatThrownBy(() -> client.write(bytes("big"), Record.value(1, new byte[MAX_VALUE + 100])).block(WAIT))
                .isInstanceOf(PeerException.Remote.class)
                .hasMessageContaining("at most");
        assertThat(store.get(bytes("big"))).isNull();
        client.write(bytes("small"), Record.value(1, new byte[10])).block(WAIT);
    }

    /**
     * Peers' writes are bounded in bytes apart from requests, by backpressure: a write that passes
     * the bound is taken (its frame is here), but the connection is read no further until half the
     * bound is free again; nothing is refused, and a write alone always fits.
     */
    @Test
    void writesPastTheByteBoundWaitUnreadUntilOthersEndAndNoneIsRefused() {
        server(UnaryOperator.identity(), 100);
        PeerClient client = client();
        store.slowWrites = new CompletableFuture<>();
        Mono<?> first = client.write(bytes("first"), Record.value(1, new byte[60])).cache();
        first.subscribe(ignored -> { }, ignored -> { });
        Awaitility.await().atMost(WAIT).until(() -> store.get(bytes("first")) != null);
        Mono<?> second = client.write(bytes("second"), Record.value(1, new byte[60])).cache();
        second.subscribe(ignored -> { }, ignored -> { });
        Awaitility.await().atMost(WAIT).until(() -> store.get(bytes("second")) != null);
        Mono<?> third = client.write(bytes("third"), Record.value(1, new byte[10])).cache();
        third.subscribe(ignored -> { }, ignored -> { });
        Awaitility.await().during(Duration.ofMillis(300)).atMost(WAIT)
                .until(() -> store.get(bytes("third")) == null);

        store.slowWrites.complete(true);
        first.block(WAIT);
        second.block(WAIT);
        store.slowWrites = null;
        third.block(WAIT);
        assertThat(store.get(bytes("third"))).as("read once the bound had room").isNotNull();
        client.write(bytes("larger than the bound, alone"), Record.value(1, new byte[150])).block(WAIT);
    }

    /**
     * Requests past the bound on requests in progress wait unread too, and are served once others
     * end. (Frames that came in the same read as the one past the bound are taken with it: the
     * bound is exceeded by at most one read's worth.)
     */
    @Test
    void requestsPastTheirBoundWaitUnreadInsteadOfBeingRefused() {
        server = new PeerServer(new ServerSettings(0, new Handshake(SECRET), 1024, MAX_VALUE + 10, 2, 64L << 20,
                TIMEOUT, TIMEOUT), store, storage, loops, meters, UnaryOperator.identity());
        PeerClient client = client();
        store.slowWrites = new CompletableFuture<>();
        List<Mono<?>> writes = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            Mono<?> write = client.write(bytes("w" + i), Record.value(1, new byte[1])).cache();
            write.subscribe(ignored -> { }, ignored -> { });
            writes.add(write);
            if (i == 2) {
                // Past the bound of 2: the connection is paused once this one is taken.
                Awaitility.await().atMost(WAIT).until(() -> store.get(bytes("w2")) != null);
            }
        }
        Awaitility.await().during(Duration.ofMillis(300)).atMost(WAIT)
                .until(() -> store.get(bytes("w3")) == null && store.get(bytes("w4")) == null);
        store.slowWrites.complete(true);
        store.slowWrites = null;
        writes.forEach(write -> write.block(WAIT));
        assertThat(store.get(bytes("w4"))).isNotNull();
    }

    /** A type this version does not know is answered with an error; the connection goes on. */
    @Test
    void anUnknownMessageTypeIsAnsweredWithAnErrorAndTheConnectionStaysUsable() throws Exception {
        server();
        try (HandshakenSocket peer = new HandshakenSocket(server.port(), SECRET)) {
            peer.send(Wire.empty(ByteBufAllocator.DEFAULT, (byte) 0x7e, 7));
            DataInputStream in = peer.in;
            int length = in.readInt();
            assertThat(in.readByte()).isEqualTo(Wire.ERROR);
            assertThat(in.readInt()).isEqualTo(7);
            assertThat(in.readUnsignedShort()).isEqualTo(Wire.ErrorCode.UNKNOWN_MESSAGE.code());
            in.readNBytes(length - 7);
            peer.send(Wire.empty(ByteBufAllocator.DEFAULT, Ping.TYPE, 8));
            in.readInt();
            assertThat(in.readByte()).isEqualTo(Wire.DONE);
            assertThat(in.readInt()).isEqualTo(8);
        }
    }

    /**
     * A peer that passes the handshake, then answers a read with half a frame and nothing more:
     * the read times out, the ping that checks the connection gets no answer either, the
     * connection is closed, failing what waited on it as the peer's failure, and the next call
     * opens a new one.
     */
    @Test
    void aPeerThatHangsMidFrameCostsTheTimeoutAndItsConnection() throws Exception {
        try (HangingPeer hanging = new HangingPeer(SECRET, SERVER)) {
            PeerClient client = client(SECRET, 1, local(hanging.port()));
            long started = System.nanoTime();
            assertThatThrownBy(() -> client.read(bytes("k")).block(TIMEOUT.multipliedBy(3)))
                    .isInstanceOf(PeerException.TimedOut.class).hasMessageContaining("no answer within");
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(TIMEOUT.multipliedBy(2));
            // Sent on the hung connection, beside the ping: failed when the ping's timeout closes it.
            assertThatThrownBy(() -> client.read(bytes("k")).block(TIMEOUT.multipliedBy(3)))
                    .isInstanceOf(PeerException.Unavailable.class).hasMessageContaining("the connection closed");
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(TIMEOUT.multipliedBy(3));
            assertThatThrownBy(() -> client.read(bytes("k")).block(TIMEOUT.multipliedBy(3)))
                    .isInstanceOf(PeerException.class);
            assertThat(hanging.connections.get()).as("a new connection after the hung one was closed").isEqualTo(2);
        }
    }

    /**
     * A peer whose store is too slow to answer within the timeout, but that answers pings: the
     * read fails alone, as a timeout that says nothing of the peer's health, and the connection and
     * the requests under way on it stay (closing it failed them all when every node shared one
     * saturated disk).
     */
    @Test
    void aBusyPeerThatStillAnswersPingsKeepsItsConnection() throws Exception {
        AtomicInteger connections = new AtomicInteger();
        server(tcp -> tcp.doOnConnection(connection -> connections.incrementAndGet()));
        PeerClient client = client();
        client.write(bytes("k"), Record.value(1, bytes("v"))).block(WAIT);
        CountDownLatch release = new CountDownLatch(1);
        store.readGate = release;
        try {
            long started = System.nanoTime();
            assertThatThrownBy(() -> client.read(bytes("k")).block(WAIT))
                    .isInstanceOf(PeerException.TimedOut.class).hasMessageContaining("no answer within");
            // The liveness ping was answered: a second timeout later the connection still carries calls.
            Thread.sleep(TIMEOUT.toMillis() + 500);
            assertThat(client.ping(PeerStatus.UNKNOWN).block(WAIT)).isNotNull();
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThan(TIMEOUT.multipliedBy(2));
        } finally {
            release.countDown();
            store.readGate = null;
        }
        assertThat(client.read(bytes("k")).block(WAIT)).isPresent();
        assertThat(connections.get()).as("the busy peer's connection was never closed").isEqualTo(1);
    }

    /** Answers that come late, many at once, still reach their callers, and nothing waits longer. */
    @Test
    void aSlowPeersAnswersStillReachTheirCallers() {
        server(ReplicaDelay.delaying(Duration.ofMillis(300)));
        PeerClient client = client();
        client.write(bytes("slow"), Record.value(1, bytes("v"))).block(WAIT);
        long started = System.nanoTime();
        List<Optional<Record>> answers = Flux.interval(Duration.ofMillis(5)).take(200)
                .flatMap(i -> client.read(bytes("slow")), 256)
                .collectList()
                .block(Duration.ofSeconds(10));
        assertThat(answers).hasSize(200).allSatisfy(answer -> assertThat(answer).isPresent());
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(3));
    }

    // ---- helpers ------------------------------------------------------------------------------

    /** Reads to the end: true once the peer closed (an orderly end, or a reset); a timeout fails. */
    private static boolean closedByPeer(InputStream in) throws IOException {
        try {
            while (in.read() >= 0) {
                // the greeting, or whatever else was sent before the close
            }
            return true;
        } catch (java.net.SocketException reset) {
            return true;
        }
    }

    /** An in-memory replica, with counters of what the server asked of it. */
    static final class MemoryStore implements PeerService {
        private final ConcurrentSkipListMap<byte[], Record> records = new ConcurrentSkipListMap<>(Arrays::compareUnsigned);
        final AtomicInteger reads = new AtomicInteger();
        final AtomicLong cursorReads = new AtomicLong();
        final AtomicInteger openCursors = new AtomicInteger();
        volatile boolean jitter;
        final AtomicLong repairedAt = new AtomicLong();
        final AtomicReference<PeerStatus> heard = new AtomicReference<>();
        final AtomicReference<String> heardFrom = new AtomicReference<>();
        final AtomicReference<String> repairedBy = new AtomicReference<>();
        final java.util.List<String> snapshotsAsked = new java.util.concurrent.CopyOnWriteArrayList<>();
        volatile String snapshotRefusal;
        volatile Duration transferPace = Duration.ZERO;
        final AtomicLong pacedBytes = new AtomicLong();

        void put(byte[] key, Record record) {
            records.put(key, record);
        }

        Record get(byte[] key) {
            return records.get(key);
        }

        @Override
        public void heardFrom(String peer, int clusterPort) {
        }

        @Override
        public String name() {
            return SERVER;
        }

        /** While set, a cursor's first read waits this long: a range read from a busy disk. */
        volatile Duration firstCursorReadDelay;

        /** While set, reads on the storage path wait for it: a store too busy to answer in time. */
        volatile CountDownLatch readGate;

        @Override
        public Optional<Record> read(byte[] key) {
            reads.incrementAndGet();
            CountDownLatch gate = readGate;
            if (gate != null) {
                try {
                    gate.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            if (jitter) {
                try {
                    Thread.sleep(ThreadLocalRandom.current().nextInt(3));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return Optional.ofNullable(records.get(key));
        }

        /** While set, a read from memory throws it: a store that fails on the event loop. */
        volatile RuntimeException cachedReadFailure;

        /** Never from memory: every read takes the storage path, where the jitter is. */
        @Override
        public RocksStore.Lookup readIfCached(byte[] key) {
            RuntimeException failure = cachedReadFailure;
            if (failure != null) {
                throw failure;
            }
            return RocksStore.Lookup.NOT_CACHED;
        }

        /** While set, writes are stored but answered only once it completes: a slow disk. */
        volatile CompletableFuture<Boolean> slowWrites;

        @Override
        public CompletableFuture<?> write(byte[] key, Record record) {
            records.merge(key, record, (old, fresh) -> fresh.timestamp() > old.timestamp() ? fresh : old);
            CompletableFuture<Boolean> slow = slowWrites;
            return slow != null ? slow : CompletableFuture.completedFuture(true);
        }

        @Override
        public RecordCursor openRange(byte[] start, byte[] end) {
            Map<byte[], Record> range = end == null ? records.tailMap(start) : records.subMap(start, end);
            Iterator<Map.Entry<byte[], Record>> entries = range.entrySet().iterator();
            openCursors.incrementAndGet();
            return new RecordCursor() {
                private boolean closed;

                @Override
                public KeyedRecord next() {
                    Duration delay = firstCursorReadDelay;
                    if (delay != null && cursorReads.get() == 0) {
                        try {
                            Thread.sleep(delay);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    }
                    if (!entries.hasNext()) {
                        return null;
                    }
                    cursorReads.incrementAndGet();
                    var entry = entries.next();
                    return new KeyedRecord(entry.getKey(), entry.getValue());
                }

                @Override
                public void close() {
                    if (!closed) {
                        closed = true;
                        openCursors.decrementAndGet();
                    }
                }
            };
        }

        @Override
        public PeerStatus status(String peer, PeerStatus caller) {
            heardFrom.set(peer);
            heard.set(caller);
            return new PeerStatus(1, 42, 7);
        }

        @Override
        public boolean repaired(String peer, long startedMillis) {
            repairedBy.set(peer);
            repairedAt.set(startedMillis);
            return true;
        }

        /** The names on this replica's ring: the test's client, unless a test says otherwise. */
        final java.util.Set<String> members = java.util.concurrent.ConcurrentHashMap.newKeySet();

        {
            members.add(CLIENT);
        }

        @Override
        public Optional<String> snapshot(String peer, String backup) {
            snapshotsAsked.add(peer + " " + backup);
            return Optional.ofNullable(snapshotRefusal);
        }

        @Override
        public boolean isMember(String peer) {
            return members.contains(peer);
        }

        /** A plain digest: how many keys, and the sum of their timestamps. */
        @Override
        public long[] digest(long[] intervals) {
            long[] digests = new long[intervals.length];
            for (int i = 0; i < intervals.length; i += 2) {
                for (var entry : inTokens(intervals[i], intervals[i + 1])) {
                    digests[i] += entry.record().timestamp();
                    digests[i + 1]++;
                }
            }
            return digests;
        }

        /** Conditional requests are tested against real stores (io.ringkv.paxos, io.ringkv.conditional). */
        @Override
        public io.ringkv.paxos.Acceptor acceptor() {
            throw new UnsupportedOperationException("no acceptor in the protocol's memory store");
        }

        @Override
        public Duration paceTransfer(long bytes) {
            pacedBytes.addAndGet(bytes);
            return transferPace;
        }

        @Override
        public RecordCursor openTokenIntervals(TokenIntervalSet intervals) {
            return cursorOver(records.entrySet().stream()
                    .filter(entry -> intervals.contains(HashRing.token(entry.getKey())))
                    .map(entry -> new KeyedRecord(entry.getKey(), entry.getValue()))
                    .toList());
        }

        @Override
        public RecordCursor openTokenRange(long low, long high) {
            return cursorOver(inTokens(low, high));
        }

        private static RecordCursor cursorOver(List<KeyedRecord> found) {
            Iterator<KeyedRecord> entries = found.iterator();
            return new RecordCursor() {
                @Override
                public KeyedRecord next() {
                    return entries.hasNext() ? entries.next() : null;
                }

                @Override
                public void close() {
                }
            };
        }

        private List<KeyedRecord> inTokens(long low, long high) {
            return records.entrySet().stream()
                    .filter(entry -> HashRing.token(entry.getKey()) >= low && HashRing.token(entry.getKey()) <= high)
                    .sorted(Comparator.comparingLong(entry -> HashRing.token(entry.getKey())))
                    .map(entry -> new KeyedRecord(entry.getKey(), entry.getValue()))
                    .toList();
        }
    }

    /** A raw socket that has done the client side of the handshake, for hand-made frames. */
    static final class HandshakenSocket implements AutoCloseable {
        final Socket socket;
        final DataInputStream in;
        final DataOutputStream out;

        HandshakenSocket(int port, String secret) throws IOException {
            this(port, secret, CLIENT);
        }

        HandshakenSocket(int port, String secret, String name) throws IOException {
            Handshake handshake = new Handshake(secret);
            socket = new Socket("127.0.0.1", port);
            socket.setSoTimeout((int) TIMEOUT.toMillis());
            in = new DataInputStream(socket.getInputStream());
            out = new DataOutputStream(socket.getOutputStream());
            ByteBuf hello = readFrame(in);
            hello.readByte();
            hello.readInt();
            Handshake.Hello greeting = Handshake.readHello(hello);
            byte[] nonce = Handshake.nonce();
            send(Handshake.auth(ByteBufAllocator.DEFAULT, Wire.VERSION, nonce, name,
                    handshake.clientProof(handshake.keyFor(greeting), greeting.serverNonce(), nonce, name)));
            ByteBuf welcome = readFrame(in);
            assertThat(welcome.readByte()).isEqualTo(Wire.WELCOME);
        }

        void send(ByteBuf frame) throws IOException {
            byte[] bytes = new byte[frame.readableBytes()];
            frame.readBytes(bytes);
            frame.release();
            out.write(bytes);
            out.flush();
        }

        static ByteBuf readFrame(DataInputStream in) throws IOException {
            int length = in.readInt();
            return Unpooled.wrappedBuffer(in.readNBytes(length));
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }

    /** A peer that greets, accepts the client, and answers the first request with half a frame. */
    static final class HangingPeer implements AutoCloseable {
        private final ServerSocket listener = new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress());
        final AtomicInteger connections = new AtomicInteger();
        private final Thread acceptor;

        HangingPeer(String secret, String name) throws IOException {
            Handshake handshake = new Handshake(secret);
            acceptor = Thread.ofPlatform().daemon().start(() -> {
                while (!listener.isClosed()) {
                    try {
                        Socket socket = listener.accept();
                        connections.incrementAndGet();
                        Thread.ofPlatform().daemon().start(() -> serve(socket, handshake, name));
                    } catch (IOException closed) {
                        return;
                    }
                }
            });
        }

        private static void serve(Socket socket, Handshake handshake, String name) {
            try (socket) {
                DataInputStream in = new DataInputStream(socket.getInputStream());
                DataOutputStream out = new DataOutputStream(socket.getOutputStream());
                byte[] serverNonce = Handshake.nonce();
                write(out, Handshake.hello(ByteBufAllocator.DEFAULT, Wire.VERSION, serverNonce, handshake.keyIds(serverNonce)));
                ByteBuf authFrame = HandshakenSocket.readFrame(in);
                authFrame.readByte();
                authFrame.readInt();
                Handshake.Auth auth = Handshake.readAuth(authFrame);
                Handshake.Key key = handshake.provenKey(serverNonce, auth).orElseThrow();
                write(out, Handshake.welcome(ByteBufAllocator.DEFAULT, Wire.VERSION,
                        handshake.serverProof(key, auth.clientNonce(), serverNonce, name), name));
                HandshakenSocket.readFrame(in); // the request
                out.writeInt(1000); // a frame of 1000 bytes ...
                out.writeByte(Read.RECORD);
                out.flush(); // ... of which nothing more ever comes
                while (in.read() >= 0) {
                    // hold the connection open until the client closes it
                }
            } catch (IOException e) {
                // the client went away
            }
        }

        private static void write(DataOutputStream out, ByteBuf frame) throws IOException {
            byte[] bytes = new byte[frame.readableBytes()];
            frame.readBytes(bytes);
            frame.release();
            out.write(bytes);
            out.flush();
        }

        int port() {
            return listener.getLocalPort();
        }

        @Override
        public void close() throws IOException {
            listener.close();
        }
    }
}
