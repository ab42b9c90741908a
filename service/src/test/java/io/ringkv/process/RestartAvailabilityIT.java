package io.ringkv.process;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.ringkv.support.NodeProcess;
import io.ringkv.support.TestNode;

/**
 * A cluster keeps serving while its nodes come and go, on three node processes: a node that is
 * back is used by its peers as soon as it answers {@code /v0/status} (no shunning by a breaker's
 * timer), and a peer that hangs never makes another node unready.
 */
class RestartAvailabilityIT {

    @TempDir
    Path dir;

    private final List<NodeProcess> nodes = new ArrayList<>();
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    @AfterEach
    void stop() {
        nodes.forEach(NodeProcess::close);
    }

    /** Runs the check; if it fails, the nodes' logs are shown first: these faults are timing. */
    private void withLogsOnFailure(Check check) throws Exception {
        try {
            check.run();
        } catch (AssertionError | Exception e) {
            for (int i = 0; i < nodes.size(); i++) {
                String log = nodes.get(i).output();
                System.out.printf("---- node %d (%s), last lines:%n%s%n", i, nodes.get(i).url(),
                        log.substring(Math.max(0, log.length() - 20_000)));
            }
            throw e;
        }
    }

    private interface Check {
        void run() throws Exception;
    }

    /**
     * The sequences a client meets first: a node stopped (its {@code 3/3} requests answer 504),
     * started again, and at once {@code 3/3} through every node, and {@code 2/3} while another
     * node is stopped, which needs the one that came back. Each node in turn.
     */
    @Test
    void aNodeThatComesBackIsUsedAtOnceThroughEveryNode() throws Exception {
        nodes.addAll(NodeProcess.cluster(3, "256m", dir));
        withLogsOnFailure(this::restartEachNodeInTurn);
    }

    private void restartEachNodeInTurn() throws Exception {
        for (NodeProcess node : nodes) {
            assertThat(put(node, "warm-" + node.port(), "3/3")).isEqualTo(201);
        }
        for (int round = 0; round < 3; round++) {
            NodeProcess restarted = nodes.get(round);
            NodeProcess coordinator = nodes.get((round + 1) % 3);
            NodeProcess other = nodes.get((round + 2) % 3);

            restarted.terminate(Duration.ofSeconds(60));
            for (int i = 0; i < 3; i++) {
                assertThat(put(coordinator, "away-" + round + "-" + i, "3/3")).as("3/3 with a node stopped").isEqualTo(504);
            }
            long started = System.nanoTime();
            restarted.start();
            // Measured as it starts: when 3/3 through a peer first succeeds, and when its status says ready.
            long firstThreeOfThree = -1;
            for (int attempt = 0; ; attempt++) {
                if (firstThreeOfThree < 0 && put(coordinator, "probe-" + round + "-" + attempt, "3/3") == 201) {
                    firstThreeOfThree = millisSince(started);
                }
                if (statusOrRefused(restarted) == 200) {
                    break;
                }
                assertThat(millisSince(started)).as("ms until the restarted node was ready").isLessThan(120_000);
                Thread.sleep(50);
            }
            System.out.printf("restart %d: ready (status 200) %d ms after its start; 3/3 through a peer first succeeded after %d ms%n",
                    round, millisSince(started), firstThreeOfThree);
            assertThat(get(restarted, "/actuator/health/readiness")).as("/v0/status 200 means ready").isEqualTo(200);

            // At once, no retries: every node calls the one that came back.
            for (NodeProcess through : nodes) {
                String key = "back-" + round + "-" + through.port();
                assertThat(put(through, key, "3/3")).as("3/3 PUT through " + through.url() + " right after the restart").isEqualTo(201);
                assertThat(get(through, "/v0/entity?id=" + key + "&replicas=3/3")).as("3/3 GET through " + through.url()).isEqualTo(200);
            }
            // And with another node stopped, 2/3 needs the one that came back.
            other.terminate(Duration.ofSeconds(60));
            assertThat(put(coordinator, "without-" + round, "2/3")).as("2/3 with the restarted node and the coordinator").isEqualTo(201);
            other.startAndAwait(Duration.ofSeconds(120));
            assertThat(put(coordinator, "all-back-" + round, "3/3")).as("3/3 once the other node is back too").isEqualTo(201);
        }
    }

    /**
     * A node frozen (SIGSTOP) the moment its web server answers, while the others are still
     * starting: the others get ready within seconds and stay ready throughout; the frozen one
     * shows in their health details only. Before, their warm-up waited on it for 30 s.
     */
    @Test
    void aFrozenPeerNeverMakesTheOthersUnready() throws Exception {
        List<Integer> management = TestNode.freePorts(3);
        // A warm-up allowed to take long: one that waited on the frozen peer would show as minutes.
        List<NodeProcess> defined = NodeProcess.define(3, "256m", dir, "--ringkv.startup.warm-up-timeout=300s");
        for (int i = 0; i < 3; i++) {
            nodes.add(defined.get(i).with("--management.server.port=" + management.get(i)));
        }
        nodes.forEach(NodeProcess::start);
        NodeProcess frozen = nodes.get(2);
        frozen.awaitListening(Duration.ofSeconds(120));
        frozen.pause();
        long frozenAt = System.nanoTime();
        try {
            for (int i = 0; i < 2; i++) {
                nodes.get(i).awaitStatus(Duration.ofSeconds(120), status -> status == 200, 100);
            }
            long readyAfter = Duration.ofNanos(System.nanoTime() - frozenAt).toMillis();
            System.out.printf("the others were ready %d ms after node 2 froze%n", readyAfter);
            assertThat(readyAfter).as("ms until the others were ready with a frozen peer").isLessThan(60_000);

            TreeMap<String, Integer> unready = new TreeMap<>();
            long until = System.nanoTime() + Duration.ofSeconds(15).toNanos();
            while (System.nanoTime() < until) {
                for (int i = 0; i < 2; i++) {
                    int readiness = get(URI.create("http://127.0.0.1:" + management.get(i) + "/actuator/health/readiness"));
                    int status = get(nodes.get(i), "/v0/status");
                    if (readiness != 200 || status != 200) {
                        unready.merge("node " + i + " readiness " + readiness + ", status " + status, 1, Integer::sum);
                    }
                }
                Thread.sleep(100);
            }
            assertThat(unready).as("polls in which a node with a frozen peer was not ready").isEmpty();
            assertThat(put(nodes.get(0), "with-a-frozen-peer", "2/3")).isEqualTo(201);
        } finally {
            frozen.resume();
        }
    }

    private static long millisSince(long nanos) {
        return Duration.ofNanos(System.nanoTime() - nanos).toMillis();
    }

    /** The status of {@code /v0/status}, or -1 while the node does not listen yet. */
    private int statusOrRefused(NodeProcess node) throws InterruptedException {
        try {
            return get(node, "/v0/status");
        } catch (IOException e) {
            return -1;
        }
    }

    private int put(NodeProcess node, String key, String replicas) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(URI.create(node.url() + "/v0/entity?id=" + key + "&replicas=" + replicas))
                .timeout(Duration.ofSeconds(10)).PUT(HttpRequest.BodyPublishers.ofString("value of " + key)).build(),
                HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    private int get(NodeProcess node, String path) throws IOException, InterruptedException {
        return get(URI.create(node.url() + path));
    }

    private int get(URI uri) throws IOException, InterruptedException {
        try {
            return http.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(5)).build(),
                    HttpResponse.BodyHandlers.discarding()).statusCode();
        } catch (HttpTimeoutException e) {
            return -1;
        }
    }
}
