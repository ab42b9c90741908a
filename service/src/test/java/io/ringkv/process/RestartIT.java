package io.ringkv.process;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.ringkv.support.NodeProcess;
import io.ringkv.support.TestNode;

/**
 * SIGTERM under load: the node stops taking requests, finishes those in flight and closes RocksDB,
 * and after a restart on the same data every write it acknowledged is there.
 */
class RestartIT {

    @TempDir
    Path dir;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    @Test
    void everyAcknowledgedWriteSurvivesASigtermRestart() throws Exception {
        int port = TestNode.freePorts(1).get(0);
        // No peers and no self: the default single-node cluster.
        String[] settings = {"--ringkv.data-dir=" + dir.resolve("data")};
        Set<String> acknowledged = ConcurrentHashMap.newKeySet();
        Set<String> deleted = ConcurrentHashMap.newKeySet();

        try (NodeProcess node = NodeProcess.of("256m", port, dir.resolve("node.log"), settings)) {
            node.startAndAwait(Duration.ofSeconds(90));
            for (int i = 0; i < 500; i++) {
                assertThat(send("PUT", node.url(), "before-" + i)).isEqualTo(201);
                acknowledged.add("before-" + i);
            }
            for (int i = 0; i < 500; i += 5) {
                assertThat(send("DELETE", node.url(), "before-" + i)).isEqualTo(202);
                acknowledged.remove("before-" + i);
                deleted.add("before-" + i);
            }

            // Writers keep going while the node is told to stop.
            AtomicBoolean running = new AtomicBoolean(true);
            ExecutorService writers = Executors.newFixedThreadPool(8);
            CountDownLatch started = new CountDownLatch(8);
            for (int w = 0; w < 8; w++) {
                int writer = w;
                writers.submit(() -> {
                    started.countDown();
                    for (int i = 0; running.get(); i++) {
                        String key = "during-" + writer + "-" + i;
                        try {
                            if (send("PUT", node.url(), key) == 201) {
                                acknowledged.add(key);
                            }
                        } catch (IOException e) {
                            return;
                        }
                    }
                });
            }
            started.await();
            Thread.sleep(1_000);
            int exit = node.terminate(Duration.ofSeconds(60));
            running.set(false);
            writers.shutdown();
            assertThat(writers.awaitTermination(30, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
            assertThat(node.output()).contains("Graceful shutdown complete");
            System.out.printf("SIGTERM: exit code %d, %d writes acknowledged%n", exit, acknowledged.size());
        }

        try (NodeProcess restarted = NodeProcess.of("256m", port, dir.resolve("restarted.log"), settings)) {
            restarted.startAndAwait(Duration.ofSeconds(90));
            for (String key : acknowledged) {
                assertThat(get(restarted.url(), key)).as(key).isEqualTo(key);
            }
            for (String key : deleted) {
                assertThat(get(restarted.url(), key)).as(key).isNull();
            }
        }
    }

    private int send(String method, String base, String key) throws IOException {
        HttpRequest.BodyPublisher body = method.equals("PUT")
                ? HttpRequest.BodyPublishers.ofString(key) : HttpRequest.BodyPublishers.noBody();
        try {
            return http.send(HttpRequest.newBuilder(URI.create(base + "/v0/entity?id=" + key)).method(method, body).build(),
                    HttpResponse.BodyHandlers.discarding()).statusCode();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
    }

    private String get(String base, String key) throws IOException, InterruptedException {
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create(base + "/v0/entity?id=" + key)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isIn(200, 404);
        return response.statusCode() == 200 ? response.body() : null;
    }
}
