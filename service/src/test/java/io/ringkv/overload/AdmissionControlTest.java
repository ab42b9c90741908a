package io.ringkv.overload;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.http.HttpStatus;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.ringkv.support.TestNode;

class AdmissionControlTest {

    @TempDir
    Path dataRoot;

    @Test
    void theBoundCountsSlotsAndFreesThemAgain() {
        AdmissionControl admission = new AdmissionControl(2, 1000, new SimpleMeterRegistry());
        assertThat(admission.tryEnter()).isTrue();
        assertThat(admission.tryEnter()).isTrue();
        assertThat(admission.tryEnter()).as("beyond the bound").isFalse();
        admission.leave();
        assertThat(admission.tryEnter()).as("a slot was given back").isTrue();
    }

    @Test
    void bytesAreHeldUntilTheLastHolderLetsGo() {
        AdmissionControl admission = new AdmissionControl(10, 1000, new SimpleMeterRegistry());
        AdmissionControl.Held first = admission.held();
        assertThat(first.tryAdd(600)).isTrue();
        AdmissionControl.Held second = admission.held();
        assertThat(second.tryAdd(300)).isTrue();
        assertThat(second.tryAdd(200)).as("past the bound: refused, nothing more held").isFalse();
        first.retain(); // the replicas' writes, still running after the answer
        first.release(); // the exchange is over
        assertThat(second.tryAdd(200)).as("the replicas still hold the first value").isFalse();
        first.release(); // the last replica has ended
        assertThat(second.tryAdd(600)).as("600 bytes were given back").isTrue();
        second.release();
        assertThat(admission.hasRoomFor(1000)).as("everything was given back").isTrue();
    }

    /**
     * A request that holds everything that is held may go past the bound (a read gathering one
     * large value from every replica); another request may not. What arrives after the last
     * holder let go is not held for anyone.
     */
    @Test
    void aRequestAloneMayPassTheBoundAndNothingIsHeldAfterItsEnd() {
        AdmissionControl admission = new AdmissionControl(10, 1000, new SimpleMeterRegistry());
        AdmissionControl.Held read = admission.held();
        assertThat(read.tryAdd(600)).isTrue();
        assertThat(read.tryAdd(600)).as("its own second answer, with nothing else held").isTrue();
        AdmissionControl.Held other = admission.held();
        assertThat(other.tryAdd(1)).as("another request, past the bound").isFalse();
        read.release();
        assertThat(admission.hasRoomFor(1000)).isTrue();
        assertThat(read.tryAdd(600)).as("a late answer, after the exchange ended").isTrue();
        assertThat(admission.hasRoomFor(1000)).as("the late answer was not held").isTrue();
        assertThat(other.tryAdd(1000)).isTrue();
    }

    /** A read let in by its first answer finishes: its other answers are held whatever the bound. */
    @Test
    void aReadLetInByItsFirstAnswerTakesTheRestWhateverTheBound() {
        AdmissionControl admission = new AdmissionControl(10, 1000, new SimpleMeterRegistry());
        AdmissionControl.Held first = admission.held();
        AdmissionControl.Held second = admission.held();
        assertThat(first.tryAddAnswer(600)).isTrue();
        assertThat(second.tryAddAnswer(600)).as("its first answer finds no room").isFalse();
        assertThat(first.tryAddAnswer(600)).as("the first read's second answer").isTrue();
        first.release();
        assertThat(admission.hasRoomFor(1000)).as("both answers were given back").isTrue();
    }

    /**
     * Values in flight are bounded in bytes, including the writes to slower replicas that go on
     * after the client's answer: node 1 answers replica writes only after 3 s, so each 1/2 PUT of
     * 40 KiB to node 0 holds its bytes that long. With a bound of 100 KiB the third such PUT gets
     * 503 at once and stores nothing; once the slow writes end, PUTs are taken again.
     */
    @Test
    void valuesInFlightAreBoundedInBytesUntilTheSlowestReplicaEnds() {
        try (BoundedNodeAndSlowPeer nodes = boundedNodeAndSlowPeer()) {
            TestNode node = nodes.node();
            byte[] value = new byte[40 * 1024];
            for (String id : List.of("first", "second")) {
                node.client().put().uri("/v0/entity?id=" + id + "&replicas=1/2").bodyValue(value).exchange()
                        .expectStatus().isCreated();
            }
            node.client().put().uri("/v0/entity?id=third&replicas=1/2").bodyValue(value).exchange()
                    .expectStatus().isEqualTo(HttpStatus.SERVICE_UNAVAILABLE)
                    .expectHeader().valueEquals("Retry-After", "1");
            assertThat(node.stored("third")).isEmpty();
            // What still fits is taken: a small write, and a read of it.
            node.client().put().uri("/v0/entity?id=small&replicas=1/2").bodyValue("v".getBytes()).exchange().expectStatus().isCreated();
            node.client().get().uri("/v0/entity?id=small&replicas=1/2").exchange().expectStatus().isOk();
            Awaitility.await().atMost(Duration.ofSeconds(15)).untilAsserted(() ->
                    node.client().put().uri("/v0/entity?id=third&replicas=1/2").bodyValue(value).exchange()
                            .expectStatus().isCreated());
        }
    }

    /**
     * Reads are bounded in bytes too, from their replicas' answers until the response is written:
     * node 1 answers after 3 s, so a read at 2/2 of a 60 KiB value holds node 0's own copy that
     * long. With a bound of 100 KiB a second such read gets 503 at once, while the first, alone,
     * still gathers both copies (120 KiB) and answers; afterwards reads are taken again. Before
     * reads were bounded, 200 concurrent reads of 4 MiB values killed a node with -Xmx256m.
     */
    @Test
    void readsAreBoundedInBytesFromTheirAnswersUntilTheResponse() throws Exception {
        try (BoundedNodeAndSlowPeer nodes = boundedNodeAndSlowPeer()) {
            TestNode node = nodes.node();
            byte[] value = new byte[60 * 1024];
            value[7] = 7;
            node.client().put().uri("/v0/entity?id=large&replicas=2/2").bodyValue(value).exchange().expectStatus().isCreated();
            var held = node.bean(MeterRegistry.class).get("ringkv.client.bytes.inflight").gauge();
            Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> held.value() == 0);

            var first = HttpClient.newHttpClient().sendAsync(
                    HttpRequest.newBuilder(URI.create(node.url() + "/v0/entity?id=large&replicas=2/2")).build(),
                    HttpResponse.BodyHandlers.ofByteArray());
            Awaitility.await().atMost(Duration.ofSeconds(2)).until(() -> held.value() == value.length);
            long started = System.nanoTime();
            node.client().get().uri("/v0/entity?id=large&replicas=2/2").exchange()
                    .expectStatus().isEqualTo(HttpStatus.SERVICE_UNAVAILABLE)
                    .expectHeader().valueEquals("Retry-After", "1");
            assertThat(Duration.ofNanos(System.nanoTime() - started)).as("refused at once").isLessThan(Duration.ofSeconds(2));

            var answer = first.get(15, TimeUnit.SECONDS);
            assertThat(answer.statusCode()).isEqualTo(200);
            assertThat(answer.body()).isEqualTo(value);
            Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> held.value() == 0);
            // Taken again; at 1/2 node 0 answers alone, which is what this is about: its bound.
            node.client().get().uri("/v0/entity?id=large&replicas=1/2").exchange()
                    .expectStatus().isOk().expectBody(byte[].class).isEqualTo(value);
        }
    }

    /**
     * A read's bytes stay held while a slower replica's call still runs, since that call keeps the
     * read's answers. At 1/2, asking both replicas at once (no hedge delay), node 0 answers from its
     * own copy at once while node 1's call takes 3 s: the 60 KiB stay held until then. When they
     * were given back with the response, a burst of large reads ran a node out of heap with 47
     * values of 4 MiB kept by such calls, against a bound of 32 MiB.
     */
    @Test
    void aReadHoldsItsBytesUntilItsSlowestReplicaCallHasEnded() throws Exception {
        try (BoundedNodeAndSlowPeer nodes = boundedNodeAndSlowPeer(Map.of("ringkv.replication.read-hedge-delay", "0ms"))) {
            TestNode node = nodes.node();
            byte[] value = new byte[60 * 1024];
            node.client().put().uri("/v0/entity?id=large&replicas=2/2").bodyValue(value).exchange().expectStatus().isCreated();
            var held = node.bean(MeterRegistry.class).get("ringkv.client.bytes.inflight").gauge();
            Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> held.value() == 0);

            long started = System.nanoTime();
            node.client().get().uri("/v0/entity?id=large&replicas=1/2").exchange()
                    .expectStatus().isOk().expectBody(byte[].class).isEqualTo(value);
            assertThat(Duration.ofNanos(System.nanoTime() - started)).as("answered from node 0's own copy")
                    .isLessThan(Duration.ofSeconds(2));
            Thread.sleep(500);
            assertThat(held.value()).as("held for node 1's call, still running").isGreaterThanOrEqualTo(value.length);
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> held.value() == 0);
        }
    }

    /** A node whose every replica answer takes {@code delay}. */
    private static Map<String, Object> slow(String delay) {
        return Map.of("ringkv.testing.replica-delay", delay, "ringkv.startup.warm-up-requests", "0");
    }

    /**
     * The fast node first, then the slow one, neither warming up: the slow node then joins a
     * cluster whose member answers at once. Started together, the one found NORMAL first might be
     * the slow one, and the other's join waited 3 s on each of its answers, as every warm-up
     * write to it did: 30 s a test instead of 11. Each must then have heard the other hold data,
     * or a write at 2/2 would find one replica and fail at once, holding nothing.
     */
    private static void startFastThenSlow(TestNode fast, TestNode slowPeer) {
        fast.start();
        slowPeer.start();
        TestNode.awaitEachSeesEveryOtherHoldData(List.of(fast, slowPeer));
    }

    /** Node 0, holding at most 100 KiB of values in flight, and node 1, whose replica answers take 3 s. */
    private record BoundedNodeAndSlowPeer(TestNode node, TestNode slowPeer) implements AutoCloseable {
        @Override
        public void close() {
            node.close();
            slowPeer.close();
        }
    }

    private BoundedNodeAndSlowPeer boundedNodeAndSlowPeer() {
        return boundedNodeAndSlowPeer(Map.of());
    }

    private BoundedNodeAndSlowPeer boundedNodeAndSlowPeer(Map<String, Object> moreNodeSettings) {
        List<Integer> ports = TestNode.freePorts(2);
        Map<String, Object> settings = new HashMap<>(Map.of(
                "ringkv.max-value-size", "64KB", "ringkv.overload.max-bytes-in-flight", "100KB",
                "ringkv.replication.timeout", "10s",
                // The peer is slow on purpose: its breaker must not open and answer 504 for it.
                "ringkv.health.breaker.slow-call-threshold", "20s"));
        settings.put("ringkv.startup.warm-up-requests", "0");
        settings.putAll(moreNodeSettings);
        TestNode node = TestNode.create(ports.get(0), dataRoot.resolve("node0"), ports, settings);
        TestNode slowPeer = TestNode.create(ports.get(1), dataRoot.resolve("node1"), ports, slow("3s"));
        startFastThenSlow(node, slowPeer);
        return new BoundedNodeAndSlowPeer(node, slowPeer);
    }

    /**
     * Node 0 takes one client request at a time, and a client holds that slot with a PUT at 2/2
     * whose second replica, node 1, answers only after 8 s (its replica delay). Node 0's other
     * clients get 503 with Retry-After at once, but replica calls from its peer (on the cluster
     * port, bounded apart) and its health checks are still served; and once the holder goes away
     * the slot is free again. (A PUT whose body is still arriving holds no slot: SlowClientTest.)
     */
    @Test
    void clientOverloadRefusesClientsButNotReplicaCallsOrHealthChecks() throws Exception {
        List<Integer> ports = TestNode.freePorts(2);
        TestNode busy = TestNode.create(ports.get(0), dataRoot.resolve("node0"), ports,
                Map.of("ringkv.overload.max-client-requests", "1", "ringkv.replication.timeout", "30s",
                        "ringkv.startup.warm-up-requests", "0"));
        TestNode slowPeer = TestNode.create(ports.get(1), dataRoot.resolve("node1"), ports, slow("8s"));
        try (busy; slowPeer) {
            startFastThenSlow(busy, slowPeer);
            try (Socket holder = new Socket("127.0.0.1", busy.port())) {
                OutputStream out = holder.getOutputStream();
                out.write(("PUT /v0/entity?id=held&replicas=2/2 HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nvalue")
                        .getBytes(StandardCharsets.US_ASCII));
                out.flush();
                Awaitility.await().atMost(Duration.ofSeconds(6)).untilAsserted(() ->
                        busy.client().get().uri("/v0/entity?id=any").exchange()
                                .expectStatus().isEqualTo(HttpStatus.SERVICE_UNAVAILABLE)
                                .expectHeader().valueEquals("Retry-After", "1"));

                slowPeer.client().put().uri("/v0/entity?id=through-peer&replicas=2/2").bodyValue("v".getBytes())
                        .exchange().expectStatus().isCreated();
                assertThat(busy.stored("through-peer")).as("the busy node took the replica write").isPresent();
                busy.client().get().uri("/actuator/health/readiness").exchange().expectStatus().isOk();
            }
            Awaitility.await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                    busy.client().get().uri("/v0/entity?id=through-peer&replicas=1/2").exchange().expectStatus().isOk());
        }
    }
}
