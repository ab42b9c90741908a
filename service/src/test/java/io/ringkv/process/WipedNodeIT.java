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
import java.util.Optional;
import java.util.TreeMap;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.util.FileSystemUtils;

import io.ringkv.record.Record;
import io.ringkv.support.NodeProcess;
import io.ringkv.support.PeerTestClient;
import io.ringkv.support.TestNode;

/**
 * A node whose data directory was wiped, among peers that hold data, on three node processes with
 * a static peer list as {@code bin/cluster} runs them (issue 29). Restarted empty, it pulls its
 * ranges before it reports ready, as a node joining through DNS discovery does; once ready, it
 * answers every key from its own store. Before, it was ready within seconds and answered
 * {@code 404} at {@code 1/3} for every key until a repair.
 */
class WipedNodeIT {

    private static final int KEYS = 2_000;
    /** Slow enough that the pull of about 500 KB takes seconds, in which its status can be seen. */
    private static final String PULL_RATE = "100KB";

    @TempDir
    Path dir;

    private final List<NodeProcess> nodes = new ArrayList<>();
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    @AfterEach
    void stop() {
        nodes.forEach(NodeProcess::close);
    }

    @Test
    void aWipedNodePullsItsRangesBeforeItIsReadyAndThenServesThemFromItsOwnStore() throws Exception {
        nodes.addAll(NodeProcess.cluster(3, "256m", dir));
        // At 3/3, so that both peers hold every key once the third copy is wiped.
        for (int i = 0; i < KEYS; i++) {
            assertThat(put(nodes.get(i % 3), i, "3/3")).as("PUT " + key(i)).isEqualTo(201);
        }

        NodeProcess wiped = nodes.get(2);
        wiped.terminate(Duration.ofSeconds(60));
        assertThat(FileSystemUtils.deleteRecursively(dir.resolve("data2"))).as("deleted").isTrue();
        wiped = wiped.with("--ringkv.repair.rate=" + PULL_RATE);
        nodes.set(2, wiped);
        long started = System.nanoTime();
        wiped.start();

        // Not ready while it pulls: every answer before the first 200 is a 503 (or no answer yet).
        TreeMap<String, Integer> beforeReady = new TreeMap<>();
        while (true) {
            Optional<HttpResponse<String>> status = status(wiped);
            if (status.isPresent() && status.get().statusCode() == 200) {
                break;
            }
            status.ifPresent(response -> beforeReady.merge(response.statusCode() + " " + response.body(), 1, Integer::sum));
            assertThat(Duration.ofNanos(System.nanoTime() - started)).as("time until the wiped node was ready")
                    .isLessThan(Duration.ofSeconds(120));
            Thread.sleep(50);
        }
        long readyAfter = Duration.ofNanos(System.nanoTime() - started).toMillis();
        System.out.printf("the wiped node was ready %d ms after its start; before that /v0/status answered %s%n",
                readyAfter, beforeReady);
        wiped.output().lines().filter(line -> line.contains("join")).forEach(System.out::println);

        // At once: every key answered at 1/3 through the node that came back...
        List<String> absent = new ArrayList<>();
        for (int i = 0; i < KEYS; i++) {
            HttpResponse<String> read = get(wiped, key(i), "1/3");
            if (read.statusCode() != 200 || !read.body().equals(value(i))) {
                absent.add(key(i) + " " + read.statusCode());
            }
        }
        assertThat(absent).as("keys not answered at 1/3 by the wiped node once ready: %d of %d, the first %s", absent.size(), KEYS,
                absent.subList(0, Math.min(10, absent.size()))).isEmpty();
        // ... and held by its own store, which a 1/3 read asks first.
        try (PeerTestClient peers = new PeerTestClient(TestNode.SECRET)) {
            var replica = peers.of(wiped.url());
            List<String> missing = new ArrayList<>();
            for (int i = 0; i < KEYS; i++) {
                Optional<Record> stored = replica.read(key(i).getBytes(StandardCharsets.UTF_8)).block(Duration.ofSeconds(10));
                if (stored.isEmpty() || stored.get().tombstone()) {
                    missing.add(key(i));
                }
            }
            assertThat(missing).as("keys the wiped node's own store lacks once it is ready: %d of %d", missing.size(), KEYS).isEmpty();
        }
        assertThat(beforeReady.keySet()).as("/v0/status before ready: 503 while it pulls")
                .isNotEmpty()
                .allSatisfy(answer -> assertThat(answer).startsWith("503"))
                .anySatisfy(answer -> assertThat(answer).contains("joining"));
        assertThat(wiped.output()).containsPattern("joined: pulled [1-9][0-9]* keys");
    }

    private static String key(int i) {
        return "wiped-" + i;
    }

    /** About 200 bytes, different for each key. */
    private static String value(int i) {
        return ("value of " + key(i) + " ").repeat(10);
    }

    private int put(NodeProcess node, int i, String replicas) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(URI.create(node.url() + "/v0/entity?id=" + key(i) + "&replicas=" + replicas))
                .timeout(Duration.ofSeconds(10)).PUT(HttpRequest.BodyPublishers.ofString(value(i))).build(),
                HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    private HttpResponse<String> get(NodeProcess node, String key, String replicas) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(URI.create(node.url() + "/v0/entity?id=" + key + "&replicas=" + replicas))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
    }

    /** {@code /v0/status}, or nothing while the node does not listen yet. */
    private Optional<HttpResponse<String>> status(NodeProcess node) throws InterruptedException {
        try {
            return Optional.of(http.send(HttpRequest.newBuilder(URI.create(node.url() + "/v0/status"))
                    .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString()));
        } catch (IOException e) {
            return Optional.empty();
        }
    }
}
