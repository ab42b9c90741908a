package io.ringkv.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.ringkv.record.HybridClock;
import io.ringkv.record.Record;
import io.ringkv.ring.ClusterMembership;
import io.ringkv.ring.HashRing;
import io.ringkv.storage.RocksStore;
import io.ringkv.support.TestCluster;
import io.ringkv.support.TestNode;

/**
 * A cleanup, asked for through {@code /actuator/cleanup} or started by the node itself once its
 * ring has settled, drops what a node keeps for keys it does not own, and nothing else.
 */
class CleanupTest {

    private static final int KEYS = 200;
    /** Three nodes at replication factor 1: each key has one owner, and every other copy is a leftover. */
    private static final Map<String, Object> SETTINGS = Map.of("ringkv.replication.factor", "1", "ringkv.repair.enabled", "false");

    @TempDir
    Path dataRoot;

    /**
     * Every key written to all three nodes ({@code replicas=3/3}), as the old owners hold keys
     * after nodes joined: node 0's cleanup drops exactly the keys it is not the owner of, keeps
     * its own, and every key still reads from its owner.
     */
    @Test
    void dropsTheKeysTheNodeDoesNotOwnAndKeepsTheRest() {
        try (TestCluster cluster = TestCluster.start(3, dataRoot, SETTINGS)) {
            TestNode node = cluster.nodes().get(0);
            long owned = writeToAllThree(cluster, node);

            node.client().post().uri("/actuator/cleanup").exchange().expectStatus().isOk()
                    .expectBody().jsonPath("$.state").isEqualTo("running").jsonPath("$.trigger").isEqualTo("request");
            awaitDone(node, "request", owned);

            assertOnlyItsOwnKeysLeftAndEveryKeyReads(cluster, node);
            for (int other = 1; other < 3; other++) {
                assertThat(cluster.nodes().get(other).stored("key-0")).as("the others were not cleaned").isPresent();
            }
        }
    }

    /**
     * The same keys, then node 0 restarted with a settle time of 2 s: on its static ring, which
     * stays unchanged, it cleans up by itself once those 2 s have passed, without being asked.
     */
    @Test
    void aNodeCleansUpByItselfOnceItsRingHasSettled() {
        try (TestCluster cluster = TestCluster.start(3, dataRoot, SETTINGS)) {
            long owned = writeToAllThree(cluster, cluster.nodes().get(0));
            cluster.nodes().get(0).stop();
            try (TestNode node = cluster.nodes().get(0).withSettings(Map.of("ringkv.cleanup.settle", "2s")).start()) {
                awaitDone(node, "automatic", owned);
                assertOnlyItsOwnKeysLeftAndEveryKeyReads(cluster, node);
            }
        }
    }

    /**
     * Keys only node 0 holds, written to its store alone: as a write acknowledged by few replicas,
     * or one that a member a static list gained was not repaired with yet. The cleanup hands each
     * to its owner before it drops it, so every one still reads.
     */
    @Test
    void handsTheOnlyCopyToItsOwnerBeforeDroppingIt() {
        try (TestCluster cluster = TestCluster.start(3, dataRoot, SETTINGS)) {
            TestNode node = cluster.nodes().get(0);
            HashRing ring = node.bean(ClusterMembership.class).ring();
            HybridClock clock = node.bean(HybridClock.class);
            List<Integer> elsewhere = IntStream.range(0, KEYS).filter(i -> !owns(ring, i, node)).boxed().toList();
            for (int i : elsewhere) {
                node.bean(RocksStore.class).apply(("key-" + i).getBytes(StandardCharsets.UTF_8),
                        Record.value(clock.now(), ("only-" + i).getBytes(StandardCharsets.UTF_8))).join();
            }

            node.client().post().uri("/actuator/cleanup").exchange().expectStatus().isOk();
            awaitDone(node, "request", KEYS - elsewhere.size());

            node.client().get().uri("/actuator/cleanup").exchange().expectBody()
                    .jsonPath("$.keysHandedOver").value(Integer.class, handed -> assertThat(handed).isGreaterThanOrEqualTo(elsewhere.size()));
            for (int i : elsewhere) {
                assertThat(node.stored("key-" + i)).as("key-%d dropped from node 0", i).isEmpty();
                cluster.client(1).get().uri("/v0/entity?id=key-" + i).exchange()
                        .expectStatus().isOk().expectBody(String.class).isEqualTo("only-" + i);
            }
        }
    }

    /** Writes every key to all three nodes; how many of them {@code node} owns, some but not all. */
    private static long writeToAllThree(TestCluster cluster, TestNode node) {
        for (int i = 0; i < KEYS; i++) {
            cluster.client(i % 3).put().uri("/v0/entity?id=key-" + i + "&replicas=3/3")
                    .bodyValue(("value-" + i).getBytes(StandardCharsets.UTF_8)).exchange().expectStatus().isCreated();
        }
        HashRing ring = node.bean(ClusterMembership.class).ring();
        long owned = IntStream.range(0, KEYS).filter(i -> owns(ring, i, node)).count();
        assertThat(owned).as("node 0 owns some keys, not all").isBetween(1L, (long) KEYS - 1);
        return owned;
    }

    private static void awaitDone(TestNode node, String trigger, long owned) {
        Awaitility.await().atMost(Duration.ofSeconds(20)).untilAsserted(() ->
                node.client().get().uri("/actuator/cleanup").exchange().expectStatus().isOk()
                        .expectBody()
                        .jsonPath("$.state").isEqualTo("done")
                        .jsonPath("$.trigger").isEqualTo(trigger)
                        // The warm-up's own keys count too.
                        .jsonPath("$.keysDropped").value(Integer.class,
                                dropped -> assertThat(dropped).isGreaterThanOrEqualTo((int) (KEYS - owned))));
    }

    private static void assertOnlyItsOwnKeysLeftAndEveryKeyReads(TestCluster cluster, TestNode node) {
        HashRing ring = node.bean(ClusterMembership.class).ring();
        for (int i = 0; i < KEYS; i++) {
            boolean owns = owns(ring, i, node);
            assertThat(node.stored("key-" + i)).as("key-%d on node 0, which %s it", i, owns ? "owns" : "does not own")
                    .matches(stored -> stored.isPresent() == owns);
            cluster.client(i % 3).get().uri("/v0/entity?id=key-" + i).exchange()
                    .expectStatus().isOk().expectBody(String.class).isEqualTo("value-" + i);
        }
    }

    private static boolean owns(HashRing ring, int key, TestNode node) {
        return ring.replicasFor(("key-" + key).getBytes(StandardCharsets.UTF_8), 1).contains(node.url());
    }
}
