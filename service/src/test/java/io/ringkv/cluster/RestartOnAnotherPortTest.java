package io.ringkv.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.Map;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.http.HttpStatus;

import io.ringkv.peer.server.PeerServer;
import io.ringkv.support.BlockHoundInstaller;
import io.ringkv.support.TestCluster;

/**
 * A node restarted on the default cluster port, a free one, listens on another port than before,
 * and another process may have taken its old one (ephemeral ports are reused). From the moment it
 * answers {@code /v0/status} 200, every peer calls it at the new port, as its ping told them:
 * the one that shunned it while it was down as well as the one that did not call it meanwhile.
 */
class RestartOnAnotherPortTest {

    @TempDir
    Path dataRoot;

    private TestCluster cluster;
    private int blockingMark;

    @BeforeEach
    void start() {
        blockingMark = BlockHoundInstaller.violations().size();
        cluster = TestCluster.start(3, dataRoot, Map.of(
                // No state exchange while the node is away: a peer that does not call it keeps its old port.
                "ringkv.cluster.discovery.refresh-interval", "5m",
                "ringkv.cleanup.settle", "0s",
                // A breaker opened by two failed calls stays open until the node is readmitted.
                "ringkv.health.breaker.minimum-calls", "2",
                "ringkv.health.breaker.open-for", "5m",
                // Ready as soon as its peers answered its ping: nothing between that and the first request.
                "ringkv.startup.warm-up-requests", "0"));
    }

    @AfterEach
    void stop() {
        cluster.close();
        assertThat(BlockHoundInstaller.violationsSince(blockingMark)).as("blocking calls on event loops").isEmpty();
    }

    private void put(int node, String key, String replicas, HttpStatus expected) {
        cluster.client(node).put().uri("/v0/entity?id=" + key + "&replicas=" + replicas).bodyValue("value".getBytes())
                .exchange().expectStatus().isEqualTo(expected);
    }

    @Test
    void aNodeBackOnAnotherClusterPortIsCalledThereThroughEveryPeerOnceReady() throws IOException {
        put(0, "before", "3/3", HttpStatus.CREATED);
        put(1, "before", "3/3", HttpStatus.CREATED);
        int oldPort = cluster.node(2).bean(PeerServer.class).port();
        cluster.node(2).stop();
        // Node 0 finds it gone and opens its breaker; node 1 does not call it and keeps its old port.
        put(0, "away-1", "3/3", HttpStatus.GATEWAY_TIMEOUT);
        put(0, "away-2", "3/3", HttpStatus.GATEWAY_TIMEOUT);
        // Takes connections (the kernel's backlog) and never says a word: another program on the old port.
        try (ServerSocket squatter = new ServerSocket(oldPort)) {
            cluster.node(2).start();
            assertThat(cluster.node(2).bean(PeerServer.class).port()).isNotEqualTo(oldPort);
            cluster.client(2).get().uri("/v0/status").exchange().expectStatus().isOk();
            put(0, "back-through-0", "3/3", HttpStatus.CREATED);
            put(1, "back-through-1", "3/3", HttpStatus.CREATED);
        }
    }
}
