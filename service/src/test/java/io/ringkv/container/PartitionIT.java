package io.ringkv.container;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.stream.IntStream;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.extension.TestWatcher;

import io.ringkv.container.RingkvCluster.Node;
import io.ringkv.record.Record;
import io.ringkv.support.ConditionalWorkload;
import io.ringkv.support.PeerTestClient;
import io.ringkv.support.WriteHistory;
import io.ringkv.testing.linearizability.LinearizabilityChecker;
import io.ringkv.testing.linearizability.Result;
import io.ringkv.testing.linearizability.Verdict;

/**
 * A network partition, the Jepsen way ({@link WriteHistory}): three nodes in containers with DNS
 * discovery, writers at the default quorum through random nodes, and one node cut off the Docker
 * network for 30 s under that load, long enough for the others to drop it from their ring (five
 * one-second rounds), while clients of conditional requests beside them record a history that must
 * be linearizable ({@link ConditionalWorkload}). Once it is back: nothing acknowledged lost, and every replica holds the
 * newest version of every key within 60 s.
 */
@ExtendWith(DockerEngineCondition.class)
class PartitionIT {

    private static final String SECRET = "it-" + UUID.randomUUID();
    private static final Duration CUT_OFF = Duration.ofSeconds(30);
    private static final Duration CONVERGED_WITHIN = Duration.ofSeconds(60);

    private static RingkvCluster cluster;

    @RegisterExtension
    static final TestWatcher printLogsOnFailure = RingkvCluster.printLogsOnFailure(() -> cluster);

    /** After the watcher, which prints the nodes' logs when the test failed. */
    @AfterAll
    static void removeTheCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void aNodeCutOffTheNetworkUnderLoadLosesNothingAndCatchesUp() throws Exception {
        Map<String, String> environment = new HashMap<>(RingkvCluster.dnsDiscovery(SECRET));
        // Often enough that what hints and read repair leave is repaired within the test.
        environment.put("RINGKV_REPAIR_INTERVAL", "10s");
        cluster = new RingkvCluster(RingkvImage.name(), SECRET, environment);
        cluster.start("node1", "node2", "node3");
        cluster.awaitRing(Duration.ofSeconds(60), "node1", "node2", "node3");
        List<Node> nodes = cluster.running();
        Node node1 = cluster.node("node1");

        // Without replicas=: the default quorum of the ring each coordinator has, which is two of
        // two while node3 is off the others' ring.
        WriteHistory history = new WriteHistory(null);
        history.start(() -> nodes.stream().map(Node::api).toList(), 4, 60);
        // Beside them, conditional requests on keys of their own, checked for linearizability.
        // They use node3 until it is cut off, so rounds it coordinates are cut off halfway; not
        // after: its published port is gone, and every request there would be an unknown outcome.
        AtomicReference<List<URI>> reachable = new AtomicReference<>(nodes.stream().map(Node::api).toList());
        ConditionalWorkload conditional = new ConditionalWorkload(reachable::get,
                IntStream.range(0, 4).mapToObj(i -> "lin-" + i).toList(), Duration.ofSeconds(5)).start(4, 45);
        Thread.sleep(5_000);
        reachable.set(List.of(node1.api(), cluster.node("node2").api()));
        cluster.disconnect("node3");
        Thread.sleep(CUT_OFF.toMillis());
        cluster.reconnect("node3");
        long reconnected = System.nanoTime();
        Thread.sleep(3_000);
        history.stop();
        conditional.close();

        Verdict verdict = LinearizabilityChecker.check(conditional.history());
        System.out.printf("[container tests] conditional requests through the partition: %s; answers by status %s%n",
                verdict.totals(), conditional.statuses());
        assertThat(conditional.unexpected()).as("answers no fault explains").isEmpty();
        assertThat(verdict.ok()).as(verdict.toString()).isTrue();
        assertThat(verdict.totals().count(Result.OK)).as("conditional requests that took effect").isGreaterThan(100);

        assertThat(history.lost(node1.api())).as("acknowledged writes lost after a 30 s partition").isEmpty();
        try (PeerTestClient peers = new PeerTestClient(SECRET)) {
            List<Function<byte[], Optional<Record>>> copies = nodes.stream()
                    // By its address on the network: Docker does not publish a reconnected container's ports again.
                    .<Function<byte[], Optional<Record>>>map(node -> key -> peers.at(node.name(),
                            new InetSocketAddress(node.ip(), RingkvCluster.CLUSTER_PORT)).read(key).block(Duration.ofSeconds(10)))
                    .toList();
            try {
                System.out.printf("[container tests] %d keys stale on some replica when the load stopped%n",
                        history.stale(copies).size());
            } catch (RuntimeException e) {
                System.out.println("[container tests] a replica could not be read yet when the load stopped: " + e);
            }
            Awaitility.await().atMost(CONVERGED_WITHIN).pollInterval(Duration.ofSeconds(1))
                    .untilAsserted(() -> assertThat(history.stale(copies)).as("stale replicas after the partition").isEmpty());
        }
        System.out.printf("[container tests] partition of node3 for %d s: %d operations, %d acknowledged, 0 lost; "
                + "every replica converged %d ms after it was back%n", CUT_OFF.toSeconds(), history.operations(),
                history.acknowledged(), Duration.ofNanos(System.nanoTime() - reconnected).toMillis());
        assertThat(history.acknowledged()).as("the load went on through the partition").isGreaterThan(100);
    }
}
