package io.ringkv.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.http.HttpStatus;

import io.micrometer.core.instrument.MeterRegistry;
import io.ringkv.record.Record;
import io.ringkv.support.BlockHoundInstaller;
import io.ringkv.support.TestCluster;
import io.ringkv.support.TestNode;

/**
 * Replicas converge on their own: a node that was down while writes and deletes went on ends up
 * holding exactly what the others hold, through hints (the writes it missed, replayed by their
 * coordinators), anti-entropy (digests of shared ranges compared, differences streamed) and read
 * repair (a read that sees a stale replica fixes it before answering). Each test turns off the
 * other mechanisms, so that it shows one of them working alone. Replicas are checked in their own
 * stores, never through reads, which would repair them.
 */
class ConvergenceTest {

    private static final int KEYS = 150;

    @TempDir
    Path dataRoot;

    private TestCluster cluster;
    private int blockingMark;
    private long restartedAtNanos;

    @BeforeEach
    void markBlocking() {
        blockingMark = BlockHoundInstaller.violations().size();
    }

    @AfterEach
    void stop() {
        if (cluster != null) {
            cluster.close();
        }
        assertThat(BlockHoundInstaller.violationsSince(blockingMark)).as("blocking calls on event loops").isEmpty();
    }

    private void put(int node, String key, String value) {
        put(node, key, value, "");
    }

    private void put(int node, String key, String value, String ttl) {
        cluster.client(node).put().uri("/v0/entity?id=" + key + "&replicas=2/3" + (ttl.isEmpty() ? "" : "&ttl=" + ttl))
                .bodyValue(value.getBytes()).exchange().expectStatus().isEqualTo(HttpStatus.CREATED);
    }

    private void delete(int node, String key) {
        cluster.client(node).delete().uri("/v0/entity?id=" + key + "&replicas=2/3").exchange().expectStatus().isEqualTo(HttpStatus.ACCEPTED);
    }

    /**
     * Node 2 stopped; keys written and some deleted at 2/3 through nodes 0 and 1, some with a time
     * to live, an hour or a second (those expire while node 2 is down, over its older version);
     * node 2 started again. A converged replica holds each expiry as the others do.
     */
    private List<String> writeWhileNodeTwoIsDown() {
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < KEYS; i++) {
            put(i % 2, "before-" + i, "old");
            keys.add("before-" + i);
        }
        cluster.node(2).stop();
        for (int i = 0; i < KEYS; i++) {
            put(i % 2, "during-" + i, "value-" + i, i % 5 == 0 ? "1h" : "");
            keys.add("during-" + i);
            if (i % 3 == 0) {
                delete(i % 2, "before-" + i);
            } else {
                put(i % 2, "before-" + i, "new-" + i, i % 7 == 0 ? "1s" : "");
            }
        }
        cluster.node(2).start();
        restartedAtNanos = System.nanoTime();
        return keys;
    }

    /** Waits until node 2 holds the newest version of every key, and reports how long that took. */
    private void awaitConvergence(List<String> keys, Duration atMost, String how) {
        Awaitility.await().atMost(atMost).pollInterval(Duration.ofMillis(200))
                .untilAsserted(() -> assertThat(staleOnNodeTwo(keys)).isEmpty());
        System.out.printf("node 2 converged through %s %d ms after it started again%n", how,
                Duration.ofNanos(System.nanoTime() - restartedAtNanos).toMillis());
    }

    /** Keys whose version on node 2 differs from the newest of nodes 0 and 1. */
    private List<String> staleOnNodeTwo(List<String> keys) {
        List<String> stale = new ArrayList<>();
        for (String key : keys) {
            Optional<Record> newest = newest(cluster.node(0).stored(key), cluster.node(1).stored(key));
            if (!cluster.node(2).stored(key).equals(newest)) {
                stale.add(key);
            }
        }
        return stale;
    }

    private static Optional<Record> newest(Optional<Record> a, Optional<Record> b) {
        if (a.isEmpty()) {
            return b;
        }
        return b.isPresent() && b.get().timestamp() > a.get().timestamp() ? b : a;
    }

    private static double counter(TestNode node, String name) {
        return node.bean(MeterRegistry.class).find(name).counters().stream().mapToDouble(c -> c.count()).sum();
    }

    @Test
    void hintsReplayWhatAReplicaMissed() {
        // No repair: only hints can heal node 2.
        cluster = TestCluster.start(3, dataRoot, Map.of("ringkv.repair.enabled", "false"));
        List<String> keys = writeWhileNodeTwoIsDown();
        assertThat(staleOnNodeTwo(keys)).as("node 2 missed writes").isNotEmpty();

        awaitConvergence(keys, Duration.ofSeconds(30), "hints");
        assertThat(counter(cluster.node(0), "ringkv.hints.replayed") + counter(cluster.node(1), "ringkv.hints.replayed"))
                .isPositive();
        assertThat(counter(cluster.node(2), "ringkv.repair.keys")).as("no repair ran").isZero();
    }

    @Test
    void antiEntropyHealsAReplicaThatGotNoHints() {
        // Hints overflow at once (the replica is then marked for a full repair), and repair runs often.
        cluster = TestCluster.start(3, dataRoot, Map.of("ringkv.hints.max-size", "1B", "ringkv.repair.interval", "2s"));
        List<String> keys = writeWhileNodeTwoIsDown();
        assertThat(staleOnNodeTwo(keys)).as("node 2 missed writes").isNotEmpty();

        awaitConvergence(keys, Duration.ofSeconds(60), "anti-entropy");
        assertThat(counter(cluster.node(0), "ringkv.hints.replayed") + counter(cluster.node(1), "ringkv.hints.replayed"))
                .as("no hint was replayed").isZero();
        double moved = cluster.nodes().stream().mapToDouble(node -> counter(node, "ringkv.repair.keys")).sum();
        assertThat(moved).as("repair moved the missed keys, deletes included").isGreaterThanOrEqualTo(KEYS * 2);
    }

    @Test
    void aReadRepairsAStaleReplicaBeforeItAnswers() {
        cluster = TestCluster.start(3, dataRoot, Map.of("ringkv.hints.max-size", "1B", "ringkv.repair.enabled", "false"));
        // At 3/3, so that node 2 surely has it before it stops.
        cluster.client(0).put().uri("/v0/entity?id=k&replicas=3/3").bodyValue("first".getBytes())
                .exchange().expectStatus().isEqualTo(HttpStatus.CREATED);
        cluster.node(2).stop();
        put(0, "k", "second");
        cluster.node(2).start();
        assertThat(cluster.node(2).stored("k")).map(record -> new String(record.value())).contains("first");

        cluster.client(2).get().uri("/v0/entity?id=k&replicas=3/3").exchange()
                .expectStatus().isOk().expectBody(String.class).isEqualTo("second");
        assertThat(cluster.node(2).stored("k")).as("repaired before the answer went out")
                .map(record -> new String(record.value())).contains("second");
    }
}
