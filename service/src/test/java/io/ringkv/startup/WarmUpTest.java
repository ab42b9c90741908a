package io.ringkv.startup;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.nio.file.Path;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.ringkv.support.Chunks;
import io.ringkv.support.TestCluster;
import io.ringkv.support.TestNode;

/**
 * The warm-up a node runs before it reports ready leaves nothing a client can see: its keys are
 * refused as client ids, its writes are tombstones, and what it sends peers are tombstones older
 * than anything a client writes.
 */
class WarmUpTest {

    @TempDir
    Path dataRoot;

    @Test
    void warmsUpBeforeReadinessAndLeavesNothingAClientCanSee() {
        try (TestCluster cluster = TestCluster.start(2, dataRoot, Map.of("ringkv.startup.warm-up-requests", "100"))) {
            for (TestNode node : cluster.nodes()) {
                node.client().get().uri("/actuator/health/readiness").exchange().expectStatus().isOk();
            }
            // The warm-up's own writes: tombstones now, under keys a client cannot use.
            long tombstones = cluster.nodes().stream()
                    .flatMap(node -> java.util.stream.IntStream.range(0, 300)
                            .mapToObj(i -> node.stored("\u0000ringkv-warm-up-" + i)))
                    .filter(found -> found.isPresent() && found.get().tombstone())
                    .count();
            assertThat(tombstones).as("warm-up writes, now tombstones, on both nodes").isGreaterThanOrEqualTo(200);
            cluster.client(0).put().uri(URI.create(cluster.node(0).url() + "/v0/entity?id=%00ringkv-warm-up-0"))
                    .bodyValue("x".getBytes()).exchange().expectStatus().isBadRequest();
            cluster.client(0).get().uri("/v0/entity?id=ringkv-warm-up-0&replicas=2/2").exchange().expectStatus().isNotFound();
            assertThat(Chunks.get(cluster.node(1).url() + "/v0/entities?start=%00").chunks())
                    .as("a range over every key").isEmpty();
        }
    }
}
