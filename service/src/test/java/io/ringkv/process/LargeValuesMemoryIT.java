package io.ringkv.process;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.Socket;
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
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

import io.ringkv.support.Chunks;
import io.ringkv.support.NodeProcess;

/**
 * Three nodes with about the chart's JVM memory flags (-Xmx256m, direct memory 64m), 200 values of
 * 4 MiB on every node, and a client reading them as a range at 1 MB/s through a small receive
 * buffer while another client keeps writing values of 4 MiB and others keep writing and reading
 * small ones: every node's resident memory stays under the chart's memory limit, no request fails
 * other than by a 503 that asks to retry, the small clients are served, and the slow range, sped
 * up, still completes with every record. Before the range waited for its connection, 60 values
 * made the nodes grow to 618–768 MiB here.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class LargeValuesMemoryIT {

    private static final int VALUES = 200;
    private static final int VALUE_SIZE = 4 * 1024 * 1024;
    /** The chart's resources.limits.memory, where the kernel kills the pod. */
    private static final long LIMIT_MIB = 768;

    @TempDir
    static Path dir;

    private static final List<NodeProcess> nodes = new ArrayList<>();
    private static final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @BeforeAll
    static void startAndFill() throws Exception {
        nodes.addAll(NodeProcess.cluster(3, "256m", dir,
                // About memory, not overload: a busy CI machine must not trip breakers or timeouts.
                "--ringkv.replication.timeout=20s",
                "--ringkv.health.breaker.slow-call-threshold=20s",
                "--ringkv.health.breaker.failure-rate=100"));
        long started = System.nanoTime();
        for (int i = 0; i < VALUES; i += 2) {
            CompletableFuture.allOf(put(i), put(i + 1)).join();
        }
        System.out.printf("wrote %d values of %d MiB at 3/3 in %.1f s; resident %s MiB%n", VALUES, VALUE_SIZE >> 20,
                (System.nanoTime() - started) / 1e9, resident());
    }

    @AfterAll
    static void stop() {
        nodes.forEach(NodeProcess::close);
    }

    @Test
    @Order(1)
    void aSlowRangeOfLargeValuesStaysWithinTheMemoryLimitAndCompletes() throws Exception {
        AtomicLong rate = new AtomicLong(1_000_000);
        AtomicInteger received = new AtomicInteger();
        List<String> broken = new ArrayList<>();
        CompletableFuture<Integer> range = CompletableFuture.supplyAsync(() -> Chunks.stream(
                nodes.get(0).url() + "/v0/entities?start=large-&end=large-~", rate::get, chunk -> {
                    int i = received.getAndIncrement();
                    byte[] key = key(i).getBytes(StandardCharsets.UTF_8);
                    if (chunk.length != key.length + 1 + VALUE_SIZE
                            || !Arrays.equals(chunk, 0, key.length, key, 0, key.length)
                            || !Arrays.equals(chunk, key.length + 1, chunk.length, value(i), 0, VALUE_SIZE)) {
                        broken.add(key(i));
                    }
                }));

        // A burst of large writes meanwhile, two at a time, each to another node.
        AtomicInteger burstWritten = new AtomicInteger();
        AtomicInteger burstRefused = new AtomicInteger();
        List<String> burstFailed = new ArrayList<>();
        AtomicBoolean bursting = new AtomicBoolean(true);
        CompletableFuture<Void> burst = CompletableFuture.allOf(burstWriter(0, bursting, burstWritten, burstRefused, burstFailed),
                burstWriter(1, bursting, burstWritten, burstRefused, burstFailed));

        long[] peak = new long[nodes.size()];
        int served = 0;
        long until = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (System.nanoTime() < until) {
            for (int n = 0; n < nodes.size(); n++) {
                peak[n] = Math.max(peak[n], nodes.get(n).residentMiB());
            }
            // Other clients meanwhile: a small write and a read, each on another node.
            String id = "small-" + served;
            assertThat(send(HttpRequest.newBuilder(URI.create(nodes.get(served % 3).url() + "/v0/entity?id=" + id))
                    .timeout(Duration.ofSeconds(10)).PUT(HttpRequest.BodyPublishers.ofString("v")).build())).as("PUT " + id).isEqualTo(201);
            assertThat(send(HttpRequest.newBuilder(URI.create(nodes.get((served + 1) % 3).url() + "/v0/entity?id=" + id))
                    .timeout(Duration.ofSeconds(10)).GET().build())).as("GET " + id).isEqualTo(200);
            served++;
            Thread.sleep(200);
        }
        bursting.set(false);
        burst.get(120, TimeUnit.SECONDS);
        System.out.printf("while a range was read at 1 MB/s (%d of %d records so far): peak resident %s MiB, %d small requests served, "
                + "%d values of 4 MiB written and %d refused with 503%n",
                received.get(), VALUES, Arrays.toString(peak), served * 2, burstWritten.get(), burstRefused.get());
        assertThat(burstFailed).as("large writes that failed other than by a 503").isEmpty();
        assertThat(burstWritten.get()).as("large writes accepted during the range").isPositive();

        rate.set(0);
        assertThat(range.get(120, TimeUnit.SECONDS)).isEqualTo(200);
        assertThat(received.get()).as("records in the range").isEqualTo(VALUES);
        assertThat(broken).as("records that came back different").isEmpty();
        for (int n = 0; n < nodes.size(); n++) {
            assertThat(nodes.get(n).isAlive()).as("node %d alive", n).isTrue();
            assertThat(peak[n]).as("node %d's peak resident memory, MiB", n).isLessThan(LIMIT_MIB);
        }
    }

    /**
     * 200 clients read values of 4 MiB from one node at once, three times over: every node stays
     * up and under the memory limit, every answer is 200, a 503 (no room) or a 504 (replicas too
     * busy to answer in time), and once the burst is over reads are served again. Before reads were
     * bounded in bytes, the first burst killed the coordinator with an OutOfMemoryError.
     */
    @Test
    @Order(2)
    void aBurstOfLargeReadsIsRefusedInPartNotFatal() throws Exception {
        long[] peak = new long[nodes.size()];
        Map<Integer, Integer> statuses = new TreeMap<>();
        List<String> failed = new ArrayList<>();
        // Each read on a socket of its own, as 200 separate clients would.
        try (ExecutorService clients = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int round = 0; round < 3; round++) {
                List<Future<String>> reads = new ArrayList<>();
                for (int i = 0; i < 200; i++) {
                    int index = i % VALUES;
                    reads.add(clients.submit(() -> rawGet(nodes.get(0).port(), index)));
                }
                for (Future<String> read : reads) {
                    for (int n = 0; n < nodes.size(); n++) {
                        peak[n] = Math.max(peak[n], nodes.get(n).residentMiB());
                    }
                    String outcome = read.get(60, TimeUnit.SECONDS);
                    if (outcome.matches("[0-9]{3}")) {
                        statuses.merge(Integer.parseInt(outcome), 1, Integer::sum);
                    } else {
                        failed.add(outcome);
                    }
                }
            }
        }
        System.out.printf("600 reads of 4 MiB, 200 at a time: %s; peak resident %s MiB%n", statuses, Arrays.toString(peak));
        assertThat(failed).as("reads that failed other than by a status").isEmpty();
        assertThat(statuses.keySet()).as("statuses").isSubsetOf(200, 503, 504);
        for (int n = 0; n < nodes.size(); n++) {
            assertThat(nodes.get(n).isAlive()).as("node %d alive", n).isTrue();
            assertThat(peak[n]).as("node %d's peak resident memory, MiB", n).isLessThan(LIMIT_MIB);
        }
        Awaitility.await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            for (int i = 0; i < 10; i++) {
                assertThat(send(HttpRequest.newBuilder(URI.create(nodes.get(i % 3).url() + "/v0/entity?id=" + key(i)))
                        .timeout(Duration.ofSeconds(10)).GET().build())).as("a read after the burst").isEqualTo(200);
            }
        });
    }

    /** A GET of value {@code i} on a connection of its own: its status, or what went wrong. */
    private static String rawGet(int port, int i) {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout(30_000);
            socket.getOutputStream().write(("GET /v0/entity?id=" + key(i) + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            byte[] response = socket.getInputStream().readAllBytes();
            String head = new String(response, 0, Math.min(response.length, 1024), StandardCharsets.ISO_8859_1);
            int bodyAt = head.indexOf("\r\n\r\n") + 4;
            if (!head.startsWith("HTTP/1.1 ") || bodyAt < 4) {
                return key(i) + ": not an HTTP response (" + response.length + " bytes)";
            }
            String status = head.substring(9, 12);
            if (status.equals("200") && !Arrays.equals(response, bodyAt, response.length, value(i), 0, VALUE_SIZE)) {
                return key(i) + ": another value";
            }
            return status;
        } catch (IOException e) {
            return key(i) + ": " + e;
        }
    }

    private static CompletableFuture<Void> put(int i) {
        HttpRequest request = HttpRequest.newBuilder(URI.create(nodes.get(i % 3).url() + "/v0/entity?id=" + key(i) + "&replicas=3/3"))
                .timeout(Duration.ofSeconds(60)).PUT(HttpRequest.BodyPublishers.ofByteArray(value(i))).build();
        return http.sendAsync(request, HttpResponse.BodyHandlers.discarding())
                .thenAccept(response -> assertThat(response.statusCode()).as("PUT " + key(i)).isEqualTo(201));
    }

    /** Writes values of 4 MiB one after another until told to stop; a 503 is the one failure allowed. */
    private static CompletableFuture<Void> burstWriter(int writer, AtomicBoolean going, AtomicInteger written,
            AtomicInteger refused, List<String> failed) {
        // A thread of its own: the common pool may have one thread on a small machine, taken by the range.
        return CompletableFuture.runAsync(() -> {
            for (int i = writer; going.get(); i += 2) {
                String id = "burst-" + i;
                try {
                    int status = http.send(HttpRequest.newBuilder(URI.create(nodes.get(i % 3).url() + "/v0/entity?id=" + id))
                            .timeout(Duration.ofSeconds(30)).PUT(HttpRequest.BodyPublishers.ofByteArray(value(i % VALUES))).build(),
                            HttpResponse.BodyHandlers.discarding()).statusCode();
                    if (status == 201) {
                        written.incrementAndGet();
                    } else if (status == 503) {
                        refused.incrementAndGet();
                    } else {
                        synchronized (failed) {
                            failed.add(id + ": " + status);
                        }
                    }
                } catch (Exception e) {
                    synchronized (failed) {
                        failed.add(id + ": " + e);
                    }
                }
            }
        }, runnable -> Thread.ofPlatform().name("burst-writer-" + writer).start(runnable));
    }

    private static int send(HttpRequest request) throws Exception {
        return http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    private static String resident() {
        return nodes.stream().map(node -> String.valueOf(node.residentMiB())).collect(Collectors.joining(", ", "[", "]"));
    }

    private static String key(int i) {
        return String.format("large-%03d", i);
    }

    private static byte[] value(int i) {
        byte[] value = new byte[VALUE_SIZE];
        Arrays.fill(value, (byte) ('a' + i % 26));
        value[i] = '!';
        return value;
    }
}
