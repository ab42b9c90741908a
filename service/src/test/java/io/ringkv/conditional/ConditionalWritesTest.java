package io.ringkv.conditional;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.http.HttpStatus;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

import io.ringkv.paxos.Acceptor;
import io.ringkv.paxos.Ballot;
import io.ringkv.paxos.Proposal;
import io.ringkv.record.Record;
import io.ringkv.support.BlockHoundInstaller;
import io.ringkv.support.TestCluster;

/** Conditional requests on three real nodes: the HTTP contract, contention, and a proposal a dead coordinator left. */
class ConditionalWritesTest {

    @TempDir
    static Path dataRoot;

    private static TestCluster cluster;
    private static int blockingMark;

    @BeforeAll
    static void start() {
        blockingMark = BlockHoundInstaller.violations().size();
        cluster = TestCluster.start(3, dataRoot, Map.of("ringkv.repair.enabled", "false"));
    }

    @AfterAll
    static void stop() {
        cluster.close();
        assertThat(BlockHoundInstaller.violationsSince(blockingMark)).as("blocking calls on event loops").isEmpty();
    }

    @Test
    void createIfAbsentWinsOnceAndAnswersTheWinnersTag() {
        EntityExchangeResult<byte[]> created = put(0, "create-once", "first", "If-None-Match", "*");
        assertThat(created.getStatus()).isEqualTo(HttpStatus.CREATED);
        String tag = created.getResponseHeaders().getETag();
        assertThat(tag).matches("\"[0-9a-f]+-[0-9a-f]+\"");

        EntityExchangeResult<byte[]> second = put(1, "create-once", "second", "If-None-Match", "*");
        assertThat(second.getStatus()).isEqualTo(HttpStatus.PRECONDITION_FAILED);
        assertThat(second.getResponseHeaders().getETag()).isEqualTo(tag);
        assertThat(body(get(2, "create-once"))).isEqualTo("first");
    }

    @Test
    void compareAndSetAppliesOnlyOnTheVersionRead() {
        put(0, "cas", "v1").getStatus();
        EntityExchangeResult<byte[]> read = get(1, "cas");
        String v1 = read.getResponseHeaders().getETag();
        assertThat(v1).isNotBlank();

        EntityExchangeResult<byte[]> swapped = put(2, "cas", "v2", "If-Match", v1);
        assertThat(swapped.getStatus()).isEqualTo(HttpStatus.CREATED);
        String v2 = swapped.getResponseHeaders().getETag();
        assertThat(v2).isNotEqualTo(v1);
        assertThat(get(0, "cas").getResponseHeaders().getETag()).as("a plain read after the answer sees it").isEqualTo(v2);

        EntityExchangeResult<byte[]> stale = put(0, "cas", "v3", "If-Match", v1);
        assertThat(stale.getStatus()).isEqualTo(HttpStatus.PRECONDITION_FAILED);
        assertThat(stale.getResponseHeaders().getETag()).isEqualTo(v2);
        assertThat(body(get(1, "cas"))).isEqualTo("v2");

        assertThat(put(1, "cas", "v3", "If-Match", "\"0-0\", " + v2).getStatus()).as("any tag of a list").isEqualTo(HttpStatus.CREATED);
        assertThat(put(1, "cas", "v4", "If-Match", "W/" + v2).getStatus()).as("a weak tag never matches").isEqualTo(HttpStatus.PRECONDITION_FAILED);
    }

    @Test
    void conditionalDeleteAndCreateAfterIt() {
        String tag = put(0, "deleted", "x", "If-None-Match", "*").getResponseHeaders().getETag();
        assertThat(delete(1, "deleted", "If-Match", "\"1-1\"").getStatus()).isEqualTo(HttpStatus.PRECONDITION_FAILED);
        assertThat(body(get(2, "deleted"))).isEqualTo("x");
        assertThat(delete(1, "deleted", "If-Match", tag).getStatus()).isEqualTo(HttpStatus.ACCEPTED);
        assertThat(get(2, "deleted").getStatus()).isEqualTo(HttpStatus.NOT_FOUND);
        assertThat(delete(0, "deleted", "If-Match", "*").getStatus()).as("If-Match: * needs a current value").isEqualTo(HttpStatus.PRECONDITION_FAILED);
        assertThat(put(0, "deleted", "again", "If-None-Match", "*").getStatus()).isEqualTo(HttpStatus.CREATED);
    }

    @Test
    void serialReadSeesTheLatestValueAndItsTag() {
        assertThat(cluster.client(0).get().uri("/v0/entity?id=serial-none&consistency=serial").exchange()
                .returnResult(byte[].class).getStatus()).isEqualTo(HttpStatus.NOT_FOUND);
        String tag = put(0, "serial", "value", "If-None-Match", "*").getResponseHeaders().getETag();
        EntityExchangeResult<byte[]> read = cluster.client(2).get().uri("/v0/entity?id=serial&consistency=serial").exchange()
                .expectBody(byte[].class).returnResult();
        assertThat(read.getStatus()).isEqualTo(HttpStatus.OK);
        assertThat(body(read)).isEqualTo("value");
        assertThat(read.getResponseHeaders().getETag()).isEqualTo(tag);
    }

    @Test
    void badConditionsAreRefusedAndChangeNothing() {
        put(0, "bad", "kept");
        assertThat(put(1, "bad", "x", "If-Match", "no-quotes").getStatus()).isEqualTo(HttpStatus.BAD_REQUEST);
        assertThat(put(1, "bad", "x", "If-None-Match", "*, \"a\"").getStatus()).isEqualTo(HttpStatus.BAD_REQUEST);
        assertThat(put(1, "bad", "x", "If-Match", "\"unterminated").getStatus()).isEqualTo(HttpStatus.BAD_REQUEST);
        assertThat(cluster.client(1).put().uri("/v0/entity?id=bad&replicas=1/3").header("If-Match", "*").bodyValue("x".getBytes())
                .exchange().returnResult(byte[].class).getStatus()).as("no majority").isEqualTo(HttpStatus.BAD_REQUEST);
        assertThat(cluster.client(1).get().uri("/v0/entity?id=bad&consistency=strong").exchange()
                .returnResult(byte[].class).getStatus()).isEqualTo(HttpStatus.BAD_REQUEST);
        assertThat(body(get(2, "bad"))).isEqualTo("kept");
    }

    @Test
    void concurrentIncrementsThroughEveryNodeLoseNone() throws Exception {
        put(0, "counter", "0");
        int clients = 6;
        int increments = 15;
        ExecutorService pool = Executors.newFixedThreadPool(clients);
        try {
            List<Future<Integer>> retries = new ArrayList<>();
            for (int c = 0; c < clients; c++) {
                int node = c % 3;
                retries.add(pool.submit(() -> increment(node, "counter", increments)));
            }
            for (Future<Integer> done : retries) {
                done.get();
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(body(get(0, "counter"))).isEqualTo(String.valueOf(clients * increments));
    }

    /** Adds 1 the optimistic way, {@code times} times; returns the 412s it retried after. */
    private static int increment(int node, String key, int times) {
        int conflicts = 0;
        for (int i = 0; i < times; i++) {
            while (true) {
                EntityExchangeResult<byte[]> read = get(node, key);
                int value = Integer.parseInt(body(read));
                HttpStatus status = HttpStatus.valueOf(put(node, key, String.valueOf(value + 1), "If-Match",
                        read.getResponseHeaders().getETag()).getStatus().value());
                if (status == HttpStatus.CREATED) {
                    break;
                }
                assertThat(status).isEqualTo(HttpStatus.PRECONDITION_FAILED);
                conflicts++;
            }
        }
        return conflicts;
    }

    @Test
    void aProposalAcceptedByAMajorityThatNobodyCommittedIsCompletedByTheNextRequest() {
        put(0, "orphan", "before");
        Record before = cluster.node(0).stored("orphan").orElseThrow();
        // A coordinator that died after its accept phase: two of three replicas accepted, none committed.
        Ballot ballot = new Ballot(before.timestamp() + 1, 42);
        Proposal orphan = Proposal.of(ballot, Record.value(before.timestamp() + 1, "orphaned".getBytes(StandardCharsets.UTF_8)));
        for (int node = 0; node < 2; node++) {
            Acceptor acceptor = cluster.node(node).bean(Acceptor.class);
            assertThat(acceptor.prepare("orphan".getBytes(StandardCharsets.UTF_8), ballot, null).granted()).isTrue();
            assertThat(acceptor.accept("orphan".getBytes(StandardCharsets.UTF_8), orphan)).isEqualTo(ballot);
        }
        assertThat(body(get(2, "orphan"))).as("a plain read does not see what was never committed").isEqualTo("before");

        EntityExchangeResult<byte[]> serial = cluster.client(2).get().uri("/v0/entity?id=orphan&consistency=serial").exchange()
                .expectBody(byte[].class).returnResult();
        assertThat(body(serial)).as("a serial read completes the chosen proposal").isEqualTo("orphaned");
        assertThat(body(get(2, "orphan"))).as("and commits it to a majority").isEqualTo("orphaned");
    }

    private static EntityExchangeResult<byte[]> put(int node, String key, String value, String... headers) {
        WebTestClient.RequestBodySpec spec = cluster.client(node).put().uri("/v0/entity?id=" + key);
        for (int i = 0; i < headers.length; i += 2) {
            spec = spec.header(headers[i], headers[i + 1]);
        }
        return spec.bodyValue(value.getBytes(StandardCharsets.UTF_8)).exchange().expectBody(byte[].class).returnResult();
    }

    private static EntityExchangeResult<byte[]> delete(int node, String key, String... headers) {
        WebTestClient.RequestHeadersSpec<?> spec = cluster.client(node).delete().uri("/v0/entity?id=" + key);
        for (int i = 0; i < headers.length; i += 2) {
            spec = spec.header(headers[i], headers[i + 1]);
        }
        return spec.exchange().expectBody(byte[].class).returnResult();
    }

    private static EntityExchangeResult<byte[]> get(int node, String key) {
        return cluster.client(node).get().uri("/v0/entity?id=" + key).exchange().expectBody(byte[].class).returnResult();
    }

    private static String body(EntityExchangeResult<byte[]> result) {
        return new String(result.getResponseBody(), StandardCharsets.UTF_8);
    }
}
