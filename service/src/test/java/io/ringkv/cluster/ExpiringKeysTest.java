package io.ringkv.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.http.HttpStatus;
import org.springframework.test.web.reactive.server.EntityExchangeResult;

import io.ringkv.record.HybridClock;
import io.ringkv.record.Record;
import io.ringkv.replication.LocalReplica;
import io.ringkv.storage.RocksStore;
import io.ringkv.support.BlockHoundInstaller;
import io.ringkv.support.TestCluster;

/**
 * Keys with a time to live on three real nodes: every read path (each node, each {@code replicas},
 * ranges, serial reads, conditions) sees a value until its expiry and nothing from then on; and a
 * replica that was down while the value expired, holding an older version, does not bring that
 * version back through hints, read repair or compaction.
 */
class ExpiringKeysTest {

    private static final String[] READS = {"1/3", "2/3", "3/3"};

    @TempDir
    static Path dataRoot;

    private static TestCluster cluster;
    private static int blockingMark;

    @BeforeAll
    static void start() {
        blockingMark = BlockHoundInstaller.violations().size();
        cluster = TestCluster.start(3, dataRoot, Map.of("ringkv.repair.enabled", "false"));
        // A ttl is taken once every member has told it reads the records that expire.
        Awaitility.await().atMost(Duration.ofSeconds(20))
                .until(() -> put(0, "ready", "x", "ttl=60").getStatus() == HttpStatus.CREATED);
    }

    @AfterAll
    static void stop() {
        cluster.close();
        assertThat(BlockHoundInstaller.violationsSince(blockingMark)).as("blocking calls on event loops").isEmpty();
    }

    @Test
    void aValueIsSeenOnEveryReadPathUntilItExpiresAndOnNoneAfter() {
        assertThat(put(0, "session", "alice", "ttl=2s").getStatus()).isEqualTo(HttpStatus.CREATED);
        long expiresAt = cluster.node(0).stored("session").or(() -> cluster.node(1).stored("session"))
                .or(() -> cluster.node(2).stored("session")).orElseThrow().expiresAt();
        assertThat(expiresAt).isGreaterThan(System.currentTimeMillis());
        for (int node = 0; node < 3; node++) {
            for (String replicas : READS) {
                EntityExchangeResult<byte[]> read = get(node, "session", "replicas=" + replicas);
                if (System.currentTimeMillis() < expiresAt - 300) {
                    assertThat(read.getStatus()).as("node %d at %s", node, replicas).isEqualTo(HttpStatus.OK);
                    assertThat(body(read)).isEqualTo("alice");
                    assertThat(read.getResponseHeaders().getFirst("Ringkv-TTL")).as("seconds left, rounded up").isIn("1", "2");
                }
            }
        }
        assertThat(get(1, "session", "consistency=serial").getStatus()).isEqualTo(HttpStatus.OK);
        String tag = get(2, "session", "").getResponseHeaders().getETag();

        Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> System.currentTimeMillis() >= expiresAt);

        for (int node = 0; node < 3; node++) {
            for (String replicas : READS) {
                assertThat(get(node, "session", "replicas=" + replicas).getStatus()).as("node %d at %s", node, replicas)
                        .isEqualTo(HttpStatus.NOT_FOUND);
            }
            assertThat(range(node, "session", "session0")).as("a range from node %d", node).isEmpty();
            assertThat(cluster.node(node).stored("session")).as("node %d still holds it: only reads decide", node)
                    .hasValueSatisfying(record -> assertThat(record.expiresAt()).isEqualTo(expiresAt));
        }
        assertThat(get(1, "session", "consistency=serial").getStatus()).isEqualTo(HttpStatus.NOT_FOUND);
        EntityExchangeResult<byte[]> swap = put(0, "session", "bob", "", "If-Match", tag);
        assertThat(swap.getStatus()).as("an expired value matches no tag").isEqualTo(HttpStatus.PRECONDITION_FAILED);
        assertThat(swap.getResponseHeaders().getETag()).as("and has none").isNull();
        assertThat(put(0, "session", "carol", "ttl=1h", "If-None-Match", "*").getStatus())
                .as("an expired key is absent: created again, with a ttl of its own").isEqualTo(HttpStatus.CREATED);
        EntityExchangeResult<byte[]> read = get(2, "session", "replicas=3/3");
        assertThat(body(read)).isEqualTo("carol");
        assertThat(read.getResponseHeaders().getFirst("Ringkv-TTL")).isIn("3599", "3600");
    }

    @Test
    void aWriteWithoutTtlMakesTheKeyPermanentAgain() {
        put(0, "made-permanent", "first", "ttl=1");
        put(1, "made-permanent", "second", "");
        Awaitility.await().pollDelay(Duration.ofMillis(1_500)).atMost(Duration.ofSeconds(5))
                .until(() -> get(2, "made-permanent", "replicas=3/3").getStatus() == HttpStatus.OK);
        EntityExchangeResult<byte[]> read = get(2, "made-permanent", "replicas=3/3");
        assertThat(body(read)).isEqualTo("second");
        assertThat(read.getResponseHeaders().getFirst("Ringkv-TTL")).isNull();
    }

    @Test
    void badTtlsAreRefusedAndChangeNothing() {
        put(0, "bad-ttl", "kept", "");
        for (String ttl : new String[] {"abc", "0", "-5", "0s", "5x", "1.5s", "366d", "99999999999999999999", "9223372036854775807d", ""}) {
            EntityExchangeResult<byte[]> refused = put(1, "bad-ttl", "changed", "ttl=" + ttl);
            assertThat(refused.getStatus()).as("ttl=%s", ttl).isEqualTo(HttpStatus.BAD_REQUEST);
            assertThat(body(refused)).as("ttl=%s", ttl).contains("ttl");
        }
        assertThat(put(1, "bad-ttl", "changed", "ttl=1&ttl=2").getStatus()).isEqualTo(HttpStatus.BAD_REQUEST);
        assertThat(get(1, "bad-ttl", "ttl=5").getStatus()).as("a GET takes no ttl").isEqualTo(HttpStatus.BAD_REQUEST);
        assertThat(cluster.client(1).delete().uri("/v0/entity?id=bad-ttl&ttl=5").exchange().returnResult(byte[].class).getStatus())
                .as("nor does a DELETE").isEqualTo(HttpStatus.BAD_REQUEST);
        EntityExchangeResult<byte[]> read = get(2, "bad-ttl", "replicas=3/3");
        assertThat(body(read)).isEqualTo("kept");
        assertThat(read.getResponseHeaders().getFirst("Ringkv-TTL")).isNull();
    }

    /**
     * A replica down while the value expired holds the older, permanent version. The hint, then a
     * read's repair, then compaction on the others (which drops the value and keeps its
     * tombstone) must each leave that older version hidden: no read on any path sees it again.
     */
    @Test
    void aReplicaDownDuringTheExpiryDoesNotBringTheOlderVersionBack() {
        put(0, "resurrect", "old and permanent", "replicas=3/3");
        cluster.node(2).stop();
        try {
            assertThat(put(0, "resurrect", "expiring", "ttl=1&replicas=2/3").getStatus()).isEqualTo(HttpStatus.CREATED);
            Awaitility.await().pollDelay(Duration.ofMillis(1_200)).atMost(Duration.ofSeconds(5))
                    .until(() -> get(0, "resurrect", "replicas=2/3").getStatus() == HttpStatus.NOT_FOUND);
            // The others drop the expired value in compaction; its tombstone stays.
            for (int node = 0; node < 2; node++) {
                cluster.node(node).bean(RocksStore.class).compact();
                assertThat(cluster.node(node).stored("resurrect")).as("node %d after compaction", node)
                        .hasValueSatisfying(record -> assertThat(record.tombstone()).isTrue());
            }
        } finally {
            cluster.node(2).start();
        }
        assertThat(cluster.node(2).stored("resurrect").map(ExpiringKeysTest::value)).as("what the returning node kept")
                .contains("old and permanent");
        // Its hint reaches it: the expiring version, newer than what it kept.
        Awaitility.await().atMost(Duration.ofSeconds(20))
                .until(() -> cluster.node(2).stored("resurrect").map(Record::expiresAt).orElse(Record.NEVER) != Record.NEVER);
        for (int node = 0; node < 3; node++) {
            for (String replicas : READS) {
                assertThat(get(node, "resurrect", "replicas=" + replicas).getStatus()).as("node %d at %s", node, replicas)
                        .isEqualTo(HttpStatus.NOT_FOUND);
            }
            assertThat(range(node, "resurrect", "resurrect0")).isEmpty();
        }
        cluster.node(2).bean(RocksStore.class).compact();
        assertThat(cluster.node(2).stored("resurrect")).hasValueSatisfying(record -> assertThat(record.tombstone()).isTrue());
        assertThat(get(2, "resurrect", "replicas=1/3").getStatus()).isEqualTo(HttpStatus.NOT_FOUND);
    }

    /** A replica that missed the expiring version (its hint lost, say) is repaired by a read with it, not the reverse. */
    @Test
    void aReadRepairsStaleReplicasWithTheExpiringVersion() {
        put(0, "repaired", "old", "replicas=3/3");
        long timestamp = cluster.node(0).bean(HybridClock.class).now();
        Record expiring = Record.expiringAfter(timestamp, "new".getBytes(StandardCharsets.UTF_8), Duration.ofHours(1));
        // Node 0 alone takes it, as if the others had missed it.
        cluster.node(0).bean(LocalReplica.class).write("repaired".getBytes(StandardCharsets.UTF_8), expiring).block();

        EntityExchangeResult<byte[]> read = get(1, "repaired", "replicas=3/3");

        assertThat(body(read)).isEqualTo("new");
        for (int node = 0; node < 3; node++) {
            assertThat(cluster.node(node).stored("repaired")).as("node %d", node).contains(expiring);
        }
    }

    private static EntityExchangeResult<byte[]> put(int node, String key, String value, String query, String... header) {
        var request = cluster.client(node).put().uri("/v0/entity?id=" + key + (query.isEmpty() ? "" : "&" + query));
        if (header.length == 2) {
            request.header(header[0], header[1]);
        }
        return request.bodyValue(value.getBytes(StandardCharsets.UTF_8)).exchange().expectBody(byte[].class).returnResult();
    }

    private static EntityExchangeResult<byte[]> get(int node, String key, String query) {
        return cluster.client(node).get().uri("/v0/entity?id=" + key + (query.isEmpty() ? "" : "&" + query)).exchange()
                .expectBody(byte[].class).returnResult();
    }

    private static String range(int node, String start, String end) {
        return body(cluster.client(node).get().uri("/v0/entities?start=" + start + "&end=" + end).exchange()
                .expectStatus().isOk().expectBody(byte[].class).returnResult());
    }

    private static String body(EntityExchangeResult<byte[]> result) {
        return result.getResponseBody() == null ? "" : new String(result.getResponseBody(), StandardCharsets.UTF_8);
    }

    private static String value(Record record) {
        return new String(record.value(), StandardCharsets.UTF_8);
    }
}
