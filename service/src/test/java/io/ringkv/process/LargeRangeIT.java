package io.ringkv.process;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.extension.TestWatcher;
import org.junit.jupiter.api.io.TempDir;

import io.ringkv.support.Chunks;
import io.ringkv.support.NodeProcess;

/**
 * A range of 25 000 records of 8 KiB, about 200 MiB, streamed from three nodes whose heaps are
 * 64 MiB: if any node held the range in memory it would run out of heap and exit
 * (-XX:+ExitOnOutOfMemoryError), and the stream would break. (Records of 8 KiB, not 2 KiB: the same
 * bytes in a quarter of the requests, so that the fill takes half a minute, not two.)
 */
class LargeRangeIT {

    private static final int RECORDS = 25_000;
    private static final int VALUE_SIZE = 8192;
    private static final String HEAP = "64m";

    @TempDir
    static Path dir;

    private static final List<NodeProcess> nodes = new ArrayList<>();

    /** A cut-off range means a node failed mid-stream: its log says why, and the temp dir goes away. */
    @RegisterExtension
    static final TestWatcher printLogsOnFailure = new TestWatcher() {
        @Override
        public void testFailed(ExtensionContext context, Throwable cause) {
            for (int i = 0; i < nodes.size(); i++) {
                String log = nodes.get(i).output();
                System.out.printf("--- node %d (%s), last lines of its log:%n%s%n", i,
                        nodes.get(i).isAlive() ? "alive" : "exited", log.substring(Math.max(0, log.length() - 6000)));
            }
        }
    };

    @BeforeAll
    static void startAndFill() throws Exception {
        nodes.addAll(NodeProcess.cluster(3, HEAP, dir,
                // This test is about memory, not about overload: on a busy CI machine the fill must
                // not trip the breakers or time out.
                "--ringkv.replication.timeout=10s",
                "--ringkv.health.breaker.slow-call-threshold=10s",
                "--ringkv.health.breaker.failure-rate=100"));

        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        Semaphore inFlight = new Semaphore(64);
        AtomicLong failures = new AtomicLong();
        long started = System.nanoTime();
        for (int i = 0; i < RECORDS; i++) {
            inFlight.acquire();
            String url = nodes.get(i % 3).url() + "/v0/entity?id=" + key(i) + "&replicas=1/1";
            http.sendAsync(HttpRequest.newBuilder(URI.create(url)).PUT(HttpRequest.BodyPublishers.ofByteArray(value(i))).build(),
                            HttpResponse.BodyHandlers.discarding())
                    .whenComplete((response, error) -> {
                        if (error != null || response.statusCode() != 201) {
                            failures.incrementAndGet();
                        }
                        inFlight.release();
                    });
        }
        inFlight.acquire(64);
        System.out.printf("filled %d records of %d bytes in %.1f s%n", RECORDS, VALUE_SIZE, (System.nanoTime() - started) / 1e9);
        assertThat(failures.get()).isZero();
    }

    @AfterAll
    static void stop() {
        nodes.forEach(NodeProcess::close);
    }

    private static String key(int i) {
        return String.format("big-%06d", i);
    }

    private static byte[] value(int i) {
        byte[] value = new byte[VALUE_SIZE];
        Arrays.fill(value, (byte) ('a' + i % 26));
        byte[] prefix = key(i).getBytes(StandardCharsets.UTF_8);
        System.arraycopy(prefix, 0, value, 0, prefix.length);
        return value;
    }

    @Test
    void streamsTheWholeRangeInOrderThroughSmallHeaps() {
        int[] count = {0};
        long started = System.nanoTime();
        int status = Chunks.stream(nodes.get(0).url() + "/v0/entities?start=big-", chunk -> {
            byte[] expectedKey = key(count[0]).getBytes(StandardCharsets.UTF_8);
            byte[] expected = new byte[expectedKey.length + 1 + VALUE_SIZE];
            System.arraycopy(expectedKey, 0, expected, 0, expectedKey.length);
            expected[expectedKey.length] = '\n';
            System.arraycopy(value(count[0]), 0, expected, expectedKey.length + 1, VALUE_SIZE);
            assertThat(chunk).as("record " + count[0]).isEqualTo(expected);
            count[0]++;
            if (count[0] % 5_000 == 0) {
                // A slow reader for a moment: the nodes must wait, not buffer.
                sleep(500);
            }
        });
        System.out.printf("streamed %d records in %.1f s%n", count[0], (System.nanoTime() - started) / 1e9);
        assertThat(status).isEqualTo(200);
        assertThat(count[0]).isEqualTo(RECORDS);
        for (NodeProcess node : nodes) {
            assertThat(node.isAlive()).as("%s is alive; its log:%n%s", node.url(), tail(node.output())).isTrue();
        }
    }

    @Test
    void servesABoundedSliceOfIt() {
        List<String> keys = new ArrayList<>();
        Chunks.stream(nodes.get(2).url() + "/v0/entities?start=big-010000&end=big-010100",
                chunk -> keys.add(new String(chunk, 0, 10, StandardCharsets.UTF_8)));
        assertThat(keys).hasSize(100).first().isEqualTo("big-010000");
        assertThat(keys).last().isEqualTo("big-010099");
    }

    private static String tail(String log) {
        return log.substring(Math.max(0, log.length() - 4000));
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
