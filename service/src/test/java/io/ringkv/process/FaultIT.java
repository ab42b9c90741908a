package io.ringkv.process;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.ringkv.record.Record;
import io.ringkv.support.NodeProcess;
import io.ringkv.support.PeerTestClient;
import io.ringkv.support.TestNode;
import io.ringkv.support.WriteHistory;

/**
 * Data safety the Jepsen way ({@link WriteHistory}), on three node processes: eight writers PUT
 * and DELETE at {@code 2/3} through random nodes; a fault is injected under that load; then
 * nothing acknowledged may be lost, and every replica must hold the newest version of every key
 * within 60 s of the fault's end. A rolling restart must also serve every request. Nodes
 * SIGKILLed and restarted under the same load: {@link ZoneOutageIT}, two at once.
 */
class FaultIT {

    private static final int WRITERS = 8;
    private static final int KEYS_PER_WRITER = 60;
    private static final Duration CONVERGED_WITHIN = Duration.ofSeconds(60);
    /** Writes acknowledged before the fault, and again after it, each within {@link #LOAD_WITHIN}. */
    private static final int LOAD_BEFORE_AND_AFTER = 1_000;
    private static final Duration LOAD_WITHIN = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    private final List<NodeProcess> nodes = new ArrayList<>();
    private final WriteHistory history = new WriteHistory("2/3", node -> nodes.stream()
            .anyMatch(process -> process.url().equals(node.toString()) && process.isStopping()));

    @AfterEach
    void stop() {
        nodes.forEach(NodeProcess::close);
    }

    private void startCluster() {
        nodes.addAll(NodeProcess.cluster(3, "256m", dir,
                "--ringkv.startup.warm-up-requests=50",
                // Often enough that what neither hints nor read repair fixed is fixed within the test.
                "--ringkv.repair.interval=10s"));
    }

    /** Runs the load around the fault, then checks: nothing lost, every replica the newest, within 60 s. */
    private void underLoad(String fault, Runnable inject) throws Exception {
        underLoad(fault, inject, false);
    }

    /**
     * @param served whether every request must be served through the fault (2xx), but those to a
     *               stopping node that it refused or closed without an answer as it stopped: a
     *               fault the cluster should hide from clients
     */
    private void underLoad(String fault, Runnable inject, boolean served) throws Exception {
        startCluster();
        history.start(() -> nodes.stream().map(node -> URI.create(node.url())).toList(), WRITERS, KEYS_PER_WRITER);
        // Counts, not a fixed time: a slow machine gets the same load before and after the fault.
        awaitAcknowledged(LOAD_BEFORE_AND_AFTER, "before " + fault);
        inject.run();
        long faultEnded = System.nanoTime();
        awaitAcknowledged(history.acknowledged() + LOAD_BEFORE_AND_AFTER, "after " + fault);
        history.stop();

        System.out.printf("%s: outcomes %s%n", fault, history.outcomes());
        if (served) {
            assertThat(history.failures())
                    .as("requests not served through " + fault + " (but those to the stopping node that got no answer)").isEmpty();
        }
        assertThat(history.lost(URI.create(nodes.get(0).url()))).as("acknowledged writes lost after " + fault).isEmpty();
        try (PeerTestClient peers = new PeerTestClient(TestNode.SECRET)) {
            List<Function<byte[], Optional<Record>>> copies = nodes.stream()
                    .<Function<byte[], Optional<Record>>>map(node -> key -> peers.of(node.url()).read(key).block(Duration.ofSeconds(10)))
                    .toList();
            System.out.printf("%s: %d keys stale on some replica when the load stopped%n", fault, history.stale(copies).size());
            Awaitility.await().atMost(CONVERGED_WITHIN).pollInterval(Duration.ofSeconds(1))
                    .untilAsserted(() -> assertThat(history.stale(copies)).as("stale replicas after " + fault).isEmpty());
        }
        System.out.printf("%s: %d operations, %d acknowledged, 0 lost; every replica converged %d ms after the fault%n",
                fault, history.operations(), history.acknowledged(), Duration.ofNanos(System.nanoTime() - faultEnded).toMillis());
    }

    @Test
    void aNodePausedForTenSecondsLosesNothingAndCatchesUp() throws Exception {
        underLoad("SIGSTOP for 10 s", () -> {
            NodeProcess victim = nodes.get(1);
            victim.pause();
            sleep(10_000);
            victim.resume();
        });
    }

    /**
     * Every request is served through a rolling restart: a stopping node closes its clients'
     * connections after their answers and refuses new ones, and a node that is back (its
     * {@code /v0/status} answers 200) is used by its peers at once, so the next node to stop never
     * leaves a key with fewer than two replicas its coordinator will call.
     */
    @Test
    void aRollingRestartOfEveryNodeServesEveryRequestLosesNothingAndCatchesUp() throws Exception {
        underLoad("rolling restart (SIGTERM, one node at a time)", () -> {
            for (NodeProcess node : nodes) {
                node.terminate(Duration.ofSeconds(60));
                node.startAndAwait(Duration.ofSeconds(120));
            }
        }, true);
    }

    private void awaitAcknowledged(long count, String when) {
        Awaitility.await().atMost(LOAD_WITHIN).pollInterval(Duration.ofMillis(100))
                .untilAsserted(() -> assertThat(history.acknowledged()).as("writes acknowledged " + when).isGreaterThanOrEqualTo(count));
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
