package io.ringkv.process;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.ringkv.support.ConditionalWorkload;
import io.ringkv.support.NodeProcess;
import io.ringkv.testing.linearizability.LinearizabilityChecker;
import io.ringkv.testing.linearizability.Result;
import io.ringkv.testing.linearizability.Verdict;

/**
 * Conditional requests are linearizable, checked the way Jepsen checks it: eight clients contend
 * on six keys through every node with serial reads, compare-and-set, create-if-absent,
 * conditional deletes and serial writes ({@link ConditionalWorkload}), while nodes are SIGKILLed
 * and restarted, SIGSTOPped, and stopped and restarted gracefully; the whole history, unknown
 * outcomes included, must be linearizable ({@link LinearizabilityChecker}). A partition:
 * {@code container.LinearizabilityPartitionIT}.
 */
class LinearizabilityIT {

    private static final Duration BETWEEN_FAULTS = Duration.ofSeconds(4);

    @TempDir
    Path dir;

    private final List<NodeProcess> nodes = new ArrayList<>();

    @AfterEach
    void stop() {
        nodes.forEach(NodeProcess::close);
    }

    @Test
    void historiesUnderKillPauseAndRestartAreLinearizable() throws Exception {
        nodes.addAll(NodeProcess.cluster(3, "256m", dir, "--ringkv.startup.warm-up-requests=50"));
        List<URI> urls = nodes.stream().map(node -> URI.create(node.url())).toList();
        List<String> keys = IntStream.range(0, 6).mapToObj(i -> "lin-" + i).toList();
        ConditionalWorkload workload = new ConditionalWorkload(() -> urls, keys, Duration.ofSeconds(5)).start(8, 44);
        try {
            pause(BETWEEN_FAULTS);
            nodes.get(1).kill();
            pause(BETWEEN_FAULTS);
            nodes.get(1).startAndAwait(Duration.ofSeconds(120));
            pause(BETWEEN_FAULTS);
            nodes.get(2).pause();
            pause(BETWEEN_FAULTS);
            nodes.get(2).resume();
            pause(BETWEEN_FAULTS);
            nodes.get(0).terminate(Duration.ofSeconds(60));
            nodes.get(0).startAndAwait(Duration.ofSeconds(120));
            pause(BETWEEN_FAULTS);
            // Coordinators killed between their phases leave proposals half-done for the others.
            nodes.get(2).kill();
            pause(BETWEEN_FAULTS);
        } finally {
            workload.close();
        }

        Verdict verdict = LinearizabilityChecker.check(workload.history());
        System.out.printf("linearizability under kill, pause and restart: %s; answers by status %s%n", verdict.totals(), workload.statuses());
        assertThat(workload.unexpected()).as("answers no fault explains").isEmpty();
        assertThat(verdict.ok()).as(verdict.toString()).isTrue();
        assertThat(verdict.totals().operations()).as("operations checked").isGreaterThan(1_000);
        assertThat(verdict.totals().count(Result.OK)).as("operations that took effect").isGreaterThan(300);
        assertThat(verdict.totals().count(Result.FAILED)).as("conditions that did not hold").isGreaterThan(50);
    }

    private static void pause(Duration duration) throws InterruptedException {
        Thread.sleep(duration.toMillis());
    }
}
