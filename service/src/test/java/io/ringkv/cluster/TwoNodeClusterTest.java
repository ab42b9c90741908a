package io.ringkv.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.http.HttpStatus;

import io.ringkv.support.BlockHoundInstaller;
import io.ringkv.support.Chunks;
import io.ringkv.support.TestCluster;

/** With two nodes the default quorum is 2/2: both must answer unless the client asks for less. */
class TwoNodeClusterTest {

    @TempDir
    Path dataRoot;

    @Test
    void defaultsToBothNodesAndFallsBackToOneWhenAsked() {
        int mark = BlockHoundInstaller.violations().size();
        try (TestCluster cluster = TestCluster.start(2, dataRoot)) {
            cluster.client(0).put().uri("/v0/entity?id=a").bodyValue("A".getBytes()).exchange().expectStatus().isCreated();
            cluster.client(1).get().uri("/v0/entity?id=a").exchange().expectStatus().isOk().expectBody(String.class).isEqualTo("A");
            cluster.client(1).get().uri("/v0/entity?id=a&replicas=3/3").exchange().expectStatus().isBadRequest();
            cluster.client(0).put().uri("/v0/entity?id=b&replicas=1/1").bodyValue("B".getBytes()).exchange().expectStatus().isCreated();
            assertThat(Chunks.get(cluster.node(1).url() + "/v0/entities?start=a").chunks()).containsExactly("a\nA", "b\nB");

            cluster.node(1).stop();
            cluster.client(0).put().uri("/v0/entity?id=a").bodyValue("A2".getBytes()).exchange()
                    .expectStatus().isEqualTo(HttpStatus.GATEWAY_TIMEOUT);
            cluster.client(0).put().uri("/v0/entity?id=a&replicas=1/2").bodyValue("A2".getBytes()).exchange().expectStatus().isCreated();
            cluster.client(0).get().uri("/v0/entity?id=a&replicas=1/2").exchange().expectStatus().isOk().expectBody(String.class).isEqualTo("A2");
            // A range needs every member: one that is down could hold keys no other node has.
            assertThat(Chunks.get(cluster.node(0).url() + "/v0/entities?start=a").status()).isEqualTo(504);
        }
        assertThat(BlockHoundInstaller.violationsSince(mark)).isEmpty();
    }
}
