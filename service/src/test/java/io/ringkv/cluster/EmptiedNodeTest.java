package io.ringkv.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.http.HttpStatus;

import io.ringkv.ring.ClusterMembership;
import io.ringkv.ring.MemberState;
import io.ringkv.support.TestCluster;
import io.ringkv.support.TestNode;

/**
 * A node of a static peer list whose data directory was emptied, among peers that hold data: it
 * pulls its ranges before it serves them. Meanwhile it is JOINING on every node, so that no read
 * counts its empty store, and still coordinates through its peers; it is NORMAL on every node the
 * moment it is ready.
 */
class EmptiedNodeTest {

    private static final int KEYS = 300;

    @TempDir
    Path dataRoot;

    @Test
    void anEmptiedNodeIsJoiningEverywhereUntilItHoldsItsRangesThenNormalEverywhereAtOnce() throws IOException {
        // No anti-entropy: what the emptied node holds, it pulled. Probe rounds a minute apart: a
        // state the peers hear within seconds, they heard from the node's own pings.
        try (TestCluster cluster = TestCluster.start(3, dataRoot,
                Map.of("ringkv.repair.enabled", "false", "ringkv.cluster.discovery.refresh-interval", "60s"))) {
            List<String> keys = IntStream.range(0, KEYS).mapToObj(i -> "key-" + i).toList();
            for (String key : keys) {
                cluster.client(0).put().uri("/v0/entity?id=" + key + "&replicas=3/3").bodyValue(("value of " + key).getBytes())
                        .exchange().expectStatus().isCreated();
            }
            TestNode emptied = cluster.node(2);
            emptied.stop();
            deleteRecursively(dataRoot.resolve("node2"));

            // Slowed so that the pull of about 10 KB takes seconds.
            try (TestNode back = emptied.withSettings(Map.of("ringkv.repair.rate", "2KB")).startJoining()) {
                var ownView = back.bean(ClusterMembership.class);
                assertThat(ownView.state(back.url())).isEqualTo(MemberState.JOINING);
                back.client().get().uri("/v0/status").exchange().expectStatus().isEqualTo(HttpStatus.SERVICE_UNAVAILABLE);
                for (int peer = 0; peer < 2; peer++) {
                    assertThat(cluster.node(peer).bean(ClusterMembership.class).state(back.url()))
                            .as("node %d's view while it pulls", peer).isEqualTo(MemberState.JOINING);
                }
                // It coordinates through the two that hold data, a from of three included; three
                // acknowledgements it cannot offer yet.
                back.client().get().uri("/v0/entity?id=key-0").exchange()
                        .expectStatus().isOk().expectBody(String.class).isEqualTo("value of key-0");
                back.client().get().uri("/v0/entity?id=key-0&replicas=2/3").exchange()
                        .expectStatus().isOk().expectBody(String.class).isEqualTo("value of key-0");
                back.client().get().uri("/v0/entity?id=key-0&replicas=3/3").exchange()
                        .expectStatus().isEqualTo(HttpStatus.SERVICE_UNAVAILABLE);

                Awaitility.await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(10))
                        .until(() -> ownView.state(back.url()).holdsData());
                for (int peer = 0; peer < 2; peer++) {
                    var peerView = cluster.node(peer).bean(ClusterMembership.class);
                    Awaitility.await("node " + peer + "'s view once it is ready, well before its next probe")
                            .atMost(Duration.ofSeconds(2)).pollInterval(Duration.ofMillis(10))
                            .until(() -> peerView.state(back.url()) == MemberState.NORMAL);
                }
                assertThat(keys.stream().filter(key -> back.stored(key).isEmpty()).toList()).as("keys its own store lacks").isEmpty();
            }
        }
    }

    private static void deleteRecursively(Path root) throws IOException {
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(path);
            }
        }
    }
}
