package io.ringkv.process;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.IntStream;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.ringkv.storage.Record;
import io.ringkv.support.NodeProcess;
import io.ringkv.support.PeerTestClient;
import io.ringkv.support.TestNode;

/**
 * Data safety the Jepsen way, on three node processes: writers PUT and DELETE at {@code 2/3}
 * and record every operation and whether it was acknowledged; a fault is injected under that
 * load; then every key is read at {@code 2/3} and checked against the history (an acknowledged
 * write may only be replaced by a later operation, acknowledged or not: anything else is
 * <em>lost</em>), and a census reads each replica's own copy through the node-to-node protocol and
 * counts the keys where it is not the newest (<em>stale</em>). Both must reach zero within 60 s
 * of the fault's end.
 */
class FaultIT {

    private static final String SECRET = "fault-test-secret";
    private static final int WRITERS = 4;
    private static final int KEYS_PER_WRITER = 60;
    private static final Duration CONVERGED_WITHIN = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private final List<NodeProcess> nodes = new ArrayList<>();
    private final Map<String, List<Operation>> history = new ConcurrentHashMap<>();

    /** One PUT (value) or DELETE (null value), and whether the cluster acknowledged it. */
    private record Operation(String value, boolean acknowledged) {
    }

    @AfterEach
    void stop() {
        nodes.forEach(NodeProcess::close);
    }

    private void startCluster() {
        List<Integer> ports = TestNode.freePorts(3);
        String peers = String.join(",", ports.stream().map(port -> "http://127.0.0.1:" + port).toList());
        for (int i = 0; i < 3; i++) {
            nodes.add(NodeProcess.of("256m", ports.get(i), dir.resolve("node" + i + ".log"),
                    "--ringkv.data-dir=" + dir.resolve("data" + i),
                    "--ringkv.cluster.self=http://127.0.0.1:" + ports.get(i),
                    "--ringkv.cluster.peers=" + peers,
                    "--ringkv.cluster.secret=" + SECRET,
                    "--ringkv.startup.warm-up-requests=50",
                    // Often enough that what neither hints nor read repair fixed is fixed within the test.
                    "--ringkv.repair.interval=10s"));
        }
        nodes.parallelStream().forEach(node -> node.startAndAwait(Duration.ofSeconds(120)));
    }

    /** Writers over their own keys, one operation at a time each, through a random node, until stopped. */
    private ExecutorService load(AtomicBoolean running) {
        ExecutorService writers = Executors.newFixedThreadPool(WRITERS);
        for (int w = 0; w < WRITERS; w++) {
            int writer = w;
            writers.submit(() -> {
                ThreadLocalRandom random = ThreadLocalRandom.current();
                for (int seq = 0; running.get(); seq++) {
                    String key = "w" + writer + "-k" + random.nextInt(KEYS_PER_WRITER);
                    boolean delete = random.nextInt(5) == 0;
                    String value = delete ? null : key + "-" + seq;
                    NodeProcess node = nodes.get(random.nextInt(nodes.size()));
                    int status = send(node, key, value);
                    history.computeIfAbsent(key, k -> new ArrayList<>())
                            .add(new Operation(value, status == (delete ? 202 : 201)));
                }
            });
        }
        return writers;
    }

    private int send(NodeProcess node, String key, String value) {
        HttpRequest.BodyPublisher body = value == null ? HttpRequest.BodyPublishers.noBody()
                : HttpRequest.BodyPublishers.ofString(value);
        try {
            return http.send(HttpRequest.newBuilder(URI.create(node.url() + "/v0/entity?id=" + key + "&replicas=2/3"))
                    .timeout(Duration.ofSeconds(3)).method(value == null ? "DELETE" : "PUT", body).build(),
                    HttpResponse.BodyHandlers.discarding()).statusCode();
        } catch (IOException e) {
            return -1; // a node down or paused: not acknowledged, but it may have been applied
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    private void stopLoad(AtomicBoolean running, ExecutorService writers) throws InterruptedException {
        running.set(false);
        writers.shutdown();
        assertThat(writers.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
    }

    /** Keys whose 2/3 read shows neither the last acknowledged operation nor a later one. */
    private List<String> lost() throws IOException, InterruptedException {
        List<String> lost = new ArrayList<>();
        for (var entry : history.entrySet()) {
            List<Operation> operations = entry.getValue();
            int lastAcknowledged = IntStream.range(0, operations.size()).filter(i -> operations.get(i).acknowledged())
                    .max().orElse(-1);
            if (lastAcknowledged < 0) {
                continue;
            }
            HttpResponse<String> read = http.send(HttpRequest.newBuilder(
                    URI.create(nodes.get(0).url() + "/v0/entity?id=" + entry.getKey() + "&replicas=2/3")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(read.statusCode()).as(entry.getKey()).isIn(200, 404);
            String seen = read.statusCode() == 200 ? read.body() : null;
            boolean allowed = operations.subList(lastAcknowledged, operations.size()).stream()
                    .anyMatch(operation -> java.util.Objects.equals(operation.value(), seen));
            if (!allowed) {
                lost.add(entry.getKey() + " reads " + seen + ", last acknowledged "
                        + operations.get(lastAcknowledged).value());
            }
        }
        return lost;
    }

    /** Keys where some replica's own copy is not the newest of the three. */
    private List<String> stale(PeerTestClient peers) {
        List<String> stale = new ArrayList<>();
        for (String key : history.keySet()) {
            byte[] bytes = key.getBytes(StandardCharsets.UTF_8);
            List<Optional<Record>> copies = nodes.stream()
                    .map(node -> peers.of(node.url()).read(bytes).block(Duration.ofSeconds(10)))
                    .toList();
            long newest = copies.stream().flatMap(Optional::stream).mapToLong(Record::timestamp).max().orElse(-1);
            if (copies.stream().anyMatch(copy -> copy.map(Record::timestamp).orElse(-1L) != newest)) {
                stale.add(key);
            }
        }
        return stale;
    }

    /** Runs the load around the fault, then checks: nothing lost, every replica the newest, within 60 s. */
    private void underLoad(String fault, Runnable inject) throws Exception {
        startCluster();
        AtomicBoolean running = new AtomicBoolean(true);
        ExecutorService writers = load(running);
        Thread.sleep(5_000);
        inject.run();
        long faultEnded = System.nanoTime();
        Thread.sleep(3_000);
        stopLoad(running, writers);
        long operations = history.values().stream().mapToLong(List::size).sum();
        long acknowledged = history.values().stream().flatMap(List::stream).filter(Operation::acknowledged).count();

        assertThat(lost()).as("acknowledged writes lost after " + fault).isEmpty();
        try (PeerTestClient peers = new PeerTestClient(SECRET)) {
            Awaitility.await().atMost(CONVERGED_WITHIN).pollInterval(Duration.ofSeconds(1))
                    .untilAsserted(() -> assertThat(stale(peers)).as("stale replicas after " + fault).isEmpty());
        }
        System.out.printf("%s: %d operations, %d acknowledged, 0 lost; every replica converged %d ms after the fault%n",
                fault, operations, acknowledged, Duration.ofNanos(System.nanoTime() - faultEnded).toMillis());
    }

    @Test
    void aNodeKilledAndRestartedLosesNothingAndCatchesUp() throws Exception {
        underLoad("SIGKILL and restart", () -> {
            NodeProcess victim = nodes.get(2);
            victim.kill();
            sleep(3_000);
            victim.startAndAwait(Duration.ofSeconds(120));
        });
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

    @Test
    void aRollingRestartOfEveryNodeLosesNothingAndCatchesUp() throws Exception {
        underLoad("rolling restart (SIGTERM, one node at a time)", () -> {
            for (NodeProcess node : nodes) {
                node.terminate(Duration.ofSeconds(60));
                node.startAndAwait(Duration.ofSeconds(120));
            }
        });
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
