package io.ringkv.process;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.ringkv.support.NodeProcess;
import io.ringkv.support.TestNode;

/**
 * A burst far above what the node works on at once: every request gets 201 or 503 quickly, none
 * hangs, the node stays within -Xmx256m (it would exit on OutOfMemoryError) and serves normally
 * right after.
 */
class OverloadIT {

    private static final int BURST = 2000;
    private static final int VALUE_SIZE = 64 * 1024;

    @TempDir
    Path dir;

    @Test
    void aBurstGets201Or503AndTheNodeServesRightAfter() throws Exception {
        int port = TestNode.freePorts(1).get(0);
        try (NodeProcess node = NodeProcess.of("256m", port, dir.resolve("node.log"),
                "--ringkv.data-dir=" + dir.resolve("data"),
                "--ringkv.overload.max-client-requests=16")) {
            node.startAndAwait(Duration.ofSeconds(90));
            HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
            byte[] value = new byte[VALUE_SIZE];
            List<CompletableFuture<Integer>> answers = new ArrayList<>();
            long started = System.nanoTime();
            for (int i = 0; i < BURST; i++) {
                HttpRequest put = HttpRequest.newBuilder(URI.create(node.url() + "/v0/entity?id=burst-" + i))
                        .timeout(Duration.ofSeconds(60))
                        .PUT(HttpRequest.BodyPublishers.ofByteArray(value)).build();
                answers.add(http.sendAsync(put, HttpResponse.BodyHandlers.discarding())
                        // A 503 without Retry-After shows up as -2 and fails the test.
                        .thenApply(response -> response.statusCode() == 503
                                && response.headers().firstValue("Retry-After").isEmpty() ? -2 : response.statusCode())
                        .exceptionally(error -> -1));
            }
            CompletableFuture.allOf(answers.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
            Map<Integer, Integer> byStatus = new TreeMap<>();
            answers.forEach(answer -> byStatus.merge(answer.join(), 1, Integer::sum));
            System.out.printf("burst of %d PUTs of %d KiB against a bound of 16: %s in %.1f s%n",
                    BURST, VALUE_SIZE / 1024, byStatus, (System.nanoTime() - started) / 1e9);

            assertThat(byStatus.keySet()).as(node.output()).isSubsetOf(201, 503);
            assertThat(byStatus).containsKey(503);
            assertThat(node.isAlive()).isTrue();

            var status = http.send(HttpRequest.newBuilder(URI.create(node.url() + "/v0/entity?id=after"))
                    .PUT(HttpRequest.BodyPublishers.ofString("fine")).build(), HttpResponse.BodyHandlers.discarding());
            assertThat(status.statusCode()).isEqualTo(201);
            var read = http.send(HttpRequest.newBuilder(URI.create(node.url() + "/v0/entity?id=after")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(read.body()).isEqualTo("fine");
            var liveness = http.send(HttpRequest.newBuilder(URI.create(node.url() + "/actuator/health/liveness")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(liveness.body()).contains("UP");
        }
    }
}
