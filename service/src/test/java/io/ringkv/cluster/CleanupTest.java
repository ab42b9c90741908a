package io.ringkv.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.stream.IntStream;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.ringkv.ring.ClusterMembership;
import io.ringkv.support.TestCluster;
import io.ringkv.support.TestNode;

/** {@code /actuator/cleanup} drops what a node keeps for keys it does not own, and nothing else. */
class CleanupTest {

    @TempDir
    Path dataRoot;

    /**
     * Three nodes at replication factor 1, every key written to all three ({@code replicas=3/3}),
     * as the old owners hold keys after nodes joined: node 0's cleanup drops exactly the keys it
     * is not the owner of, keeps its own, and every key still reads from its owner.
     */
    @Test
    void dropsTheKeysTheNodeDoesNotOwnAndKeepsTheRest() {
        try (TestCluster cluster = TestCluster.start(3, dataRoot,
                Map.of("ringkv.replication.factor", "1", "ringkv.repair.enabled", "false"))) {
            TestNode node = cluster.nodes().get(0);
            int keys = 200;
            for (int i = 0; i < keys; i++) {
                cluster.client(i % 3).put().uri("/v0/entity?id=key-" + i + "&replicas=3/3")
                        .bodyValue(("value-" + i).getBytes(StandardCharsets.UTF_8)).exchange().expectStatus().isCreated();
            }
            var ring = node.bean(ClusterMembership.class).ring();
            long owned = IntStream.range(0, keys)
                    .filter(i -> ring.replicasFor(("key-" + i).getBytes(StandardCharsets.UTF_8), 1).contains(node.url()))
                    .count();
            assertThat(owned).as("node 0 owns some keys, not all").isBetween(1L, (long) keys - 1);

            node.client().post().uri("/actuator/cleanup").exchange().expectStatus().isOk()
                    .expectBody().jsonPath("$.state").isEqualTo("running");
            Awaitility.await().atMost(Duration.ofSeconds(20)).untilAsserted(() ->
                    node.client().get().uri("/actuator/cleanup").exchange().expectStatus().isOk()
                            .expectBody()
                            .jsonPath("$.state").isEqualTo("done")
                            // The warm-up's own keys count too.
                            .jsonPath("$.keysDropped").value(Integer.class,
                                    dropped -> assertThat(dropped).isGreaterThanOrEqualTo((int) (keys - owned))));

            for (int i = 0; i < keys; i++) {
                byte[] key = ("key-" + i).getBytes(StandardCharsets.UTF_8);
                boolean owns = ring.replicasFor(key, 1).contains(node.url());
                assertThat(node.stored("key-" + i)).as("key-%d on node 0, which %s it", i, owns ? "owns" : "does not own")
                        .matches(stored -> stored.isPresent() == owns);
                cluster.client(i % 3).get().uri("/v0/entity?id=key-" + i).exchange()
                        .expectStatus().isOk().expectBody(String.class).isEqualTo("value-" + i);
            }
            for (int other = 1; other < 3; other++) {
                assertThat(cluster.nodes().get(other).stored("key-0")).as("the others were not cleaned").isPresent();
            }
        }
    }
}
