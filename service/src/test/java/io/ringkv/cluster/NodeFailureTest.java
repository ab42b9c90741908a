package io.ringkv.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.http.HttpStatus;

import io.ringkv.support.BlockHoundInstaller;
import io.ringkv.support.TestCluster;
import io.ringkv.support.TestNode;

/**
 * A node stopped and started again: quorums that can still be met succeed, those that cannot
 * answer 504, and what the stopped node missed is resolved by timestamps when it is back.
 */
class NodeFailureTest {

    @TempDir
    Path dataRoot;

    private TestCluster cluster;
    private int blockingMark;

    @BeforeEach
    void start() {
        blockingMark = BlockHoundInstaller.violations().size();
        cluster = TestCluster.start(3, dataRoot);
    }

    @AfterEach
    void stop() {
        cluster.close();
        assertThat(BlockHoundInstaller.violationsSince(blockingMark)).as("blocking calls on event loops").isEmpty();
    }

    private void put(int node, String key, String value, String replicas, HttpStatus expected) {
        cluster.client(node).put().uri("/v0/entity?id=" + key + "&replicas=" + replicas).bodyValue(value.getBytes())
                .exchange().expectStatus().isEqualTo(expected);
    }

    private void expectValueOnEveryLiveNode(String key, String replicas, String value) {
        for (TestNode node : cluster.nodes()) {
            if (node.isRunning()) {
                node.client().get().uri("/v0/entity?id=" + key + "&replicas=" + replicas).exchange()
                        .expectStatus().isOk().expectBody(String.class).isEqualTo(value);
            }
        }
    }

    private void expectAbsentOnEveryNode(String key, String replicas) {
        for (TestNode node : cluster.nodes()) {
            node.client().get().uri("/v0/entity?id=" + key + "&replicas=" + replicas).exchange().expectStatus().isNotFound();
        }
    }

    @Test
    void answers504WhenTooFewReplicasAreUpAndSucceedsWhenEnoughAre() {
        put(0, "k", "v", "3/3", HttpStatus.CREATED);
        cluster.node(2).stop();

        for (int node = 0; node < 2; node++) {
            cluster.client(node).put().uri("/v0/entity?id=k&replicas=3/3").bodyValue("x".getBytes()).exchange()
                    .expectStatus().isEqualTo(HttpStatus.GATEWAY_TIMEOUT)
                    .expectBody(String.class).isEqualTo("Not Enough Replicas");
            cluster.client(node).get().uri("/v0/entity?id=k&replicas=3/3").exchange().expectStatus().isEqualTo(HttpStatus.GATEWAY_TIMEOUT);
            cluster.client(node).delete().uri("/v0/entity?id=k&replicas=3/3").exchange().expectStatus().isEqualTo(HttpStatus.GATEWAY_TIMEOUT);

            put(node, "k", "two-of-three", "2/3", HttpStatus.CREATED);
            cluster.client(node).get().uri("/v0/entity?id=k").exchange()
                    .expectStatus().isOk().expectBody(String.class).isEqualTo("two-of-three");
        }
    }

    @Test
    void aKeyWhoseOnlyReplicaIsDownAnswers504() {
        cluster.node(2).stop();
        int found = 0;
        for (int i = 0; i < 50 && found < 3; i++) {
            // With one copy, keys whose primary is the stopped node cannot be written.
            int status = cluster.client(0).put().uri("/v0/entity?id=solo-" + i + "&replicas=1/1").bodyValue("v".getBytes())
                    .exchange().returnResult(Void.class).getStatus().value();
            assertThat(status).isIn(201, 504);
            found += status == 504 ? 1 : 0;
        }
        assertThat(found).as("keys placed on the stopped node").isEqualTo(3);
    }

    @Test
    void aWriteMissedByAStoppedNodeIsReadBackAfterItRestarts() {
        cluster.node(2).stop();
        put(0, "missed-write", "written-while-down", "2/3", HttpStatus.CREATED);
        cluster.node(2).start();
        expectValueOnEveryLiveNode("missed-write", "3/3", "written-while-down");
    }

    @Test
    void aDeleteMissedByAStoppedNodeStaysDeleted() {
        put(0, "missed-delete", "old", "3/3", HttpStatus.CREATED);
        assertThat(cluster.node(2).stored("missed-delete")).hasValueSatisfying(held -> assertThat(held.tombstone()).isFalse());
        cluster.node(2).stop();
        cluster.client(1).delete().uri("/v0/entity?id=missed-delete&replicas=2/3").exchange().expectStatus().isAccepted();
        cluster.node(2).start();
        // The restarted node comes back with "old"; the others' tombstone is newer, whether the
        // read, or the hint its peers replay as soon as it says it is up, brings it there first.
        expectAbsentOnEveryNode("missed-delete", "3/3");
    }

    @Test
    void aReCreateMissedByAStoppedNodeWinsOverItsTombstone() {
        put(0, "missed-recreate", "first", "3/3", HttpStatus.CREATED);
        cluster.client(0).delete().uri("/v0/entity?id=missed-recreate&replicas=3/3").exchange().expectStatus().isAccepted();
        cluster.node(2).stop();
        put(1, "missed-recreate", "second", "2/3", HttpStatus.CREATED);
        cluster.node(2).start();
        expectValueOnEveryLiveNode("missed-recreate", "3/3", "second");
    }
}
