package io.ringkv.process;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

import io.ringkv.support.ConditionalClient;
import io.ringkv.support.ConditionalClient.Answer;
import io.ringkv.support.ConditionalWorkload;
import io.ringkv.support.NodeProcess;
import io.ringkv.testing.linearizability.LinearizabilityChecker;
import io.ringkv.testing.linearizability.Result;
import io.ringkv.testing.linearizability.Verdict;

/**
 * Conditional requests on three node processes, in order on one cluster. The patterns they are
 * for: create-if-absent has exactly one winner per key; a counter that eight clients increment by
 * read and {@code If-Match}, one node restarted in the middle, loses nothing (and the same loop
 * with plain PUTs does). Then linearizability, checked the way Jepsen checks it: eight clients
 * contend on six keys through every node with serial reads, compare-and-set, create-if-absent,
 * conditional deletes and serial writes ({@link ConditionalWorkload}) while nodes are SIGKILLed
 * and restarted and SIGSTOPped; the whole history, unknown outcomes included, must be
 * linearizable ({@link LinearizabilityChecker}). A partition: {@code container.PartitionIT}.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ConditionalWritesIT {

    private static final Duration BETWEEN_FAULTS = Duration.ofSeconds(4);

    private static final int CLIENTS = 8;
    private static final int INCREMENTS = 1_000;

    @TempDir
    static Path dir;

    private static final List<NodeProcess> nodes = new ArrayList<>();
    private static List<URI> urls;
    private static final ConditionalClient http = new ConditionalClient(Duration.ofSeconds(5));

    @BeforeAll
    static void startCluster() {
        nodes.addAll(NodeProcess.cluster(3, "256m", dir, "--ringkv.startup.warm-up-requests=50"));
        urls = nodes.stream().map(node -> URI.create(node.url())).toList();
    }

    @AfterAll
    static void stopCluster() {
        nodes.forEach(NodeProcess::close);
    }

    /**
     * A node that is not being stopped, as a client behind a Service or a load balancer sees them:
     * a node told to stop is taken out of its endpoints, and finishes the requests it has.
     */
    private static URI anyNode() {
        List<URI> up = nodes.stream().filter(node -> !node.isStopping()).map(node -> URI.create(node.url())).toList();
        return up.get(ThreadLocalRandom.current().nextInt(up.size()));
    }

    /** The result of a counter run: its final value, and the answers of requests that ended without knowing. */
    private record Count(long finalValue, int conflicts, List<Answer> unknown) {
    }

    @Test
    @Order(3)
    void aCounterIncrementedWithIfMatchThroughARestartLosesNoIncrement() throws Exception {
        Count count = count("counter-cas", true, INCREMENTS, () -> {
            NodeProcess restarted = nodes.get(1);
            restarted.terminate(Duration.ofSeconds(60));
            restarted.startAndAwait(Duration.ofSeconds(120));
        });
        System.out.printf("counter by If-Match: %d increments of %d clients made %d (%d conflicts retried)%n",
                CLIENTS * INCREMENTS, CLIENTS, count.finalValue(), count.conflicts());
        assertThat(count.unknown()).as("increments whose outcome was unknown").isEmpty();
        assertThat(count.finalValue()).isEqualTo(CLIENTS * INCREMENTS);
    }

    @Test
    @Order(2)
    void theSameCounterWithPlainPutsLosesIncrements() throws Exception {
        int increments = 100;
        Count count = count("counter-plain", false, increments, () -> { });
        System.out.printf("counter by plain PUT: %d increments of %d clients made %d%n", CLIENTS * increments, CLIENTS, count.finalValue());
        assertThat(count.finalValue()).as("last write wins drops concurrent read-modify-writes").isLessThan(CLIENTS * increments);
    }

    /**
     * Eight clients add 1 to the key {@code increments} times each, by a plain read and then a
     * write, conditional or not; {@code midway} runs once half of the increments are made.
     */
    private static Count count(String key, boolean conditional, int increments, Runnable midway) throws Exception {
        assertThat(http.put(anyNode(), key, "0", false, null, null).status()).isEqualTo(201);
        AtomicInteger made = new AtomicInteger();
        AtomicInteger conflicts = new AtomicInteger();
        List<Answer> unknown = new java.util.concurrent.CopyOnWriteArrayList<>();
        CountDownLatch half = new CountDownLatch(CLIENTS * increments / 2);
        List<Thread> clients = new ArrayList<>();
        for (int c = 0; c < CLIENTS; c++) {
            clients.add(Thread.ofPlatform().start(() -> {
                for (int i = 0; i < increments; i++) {
                    while (true) {
                        Answer read = http.get(anyNode(), key, false);
                        if (read.status() != 200) {
                            continue; // not sent, or the node stopping: read again elsewhere
                        }
                        String next = String.valueOf(Long.parseLong(read.body()) + 1);
                        Answer written = conditional
                                ? http.put(anyNode(), key, next, false, "If-Match", read.etag().orElseThrow())
                                : http.put(anyNode(), key, next, false, null, null);
                        if (written.status() == 201) {
                            break;
                        }
                        if (written.status() == 412) {
                            conflicts.incrementAndGet();
                            // As a client of a contended key does: a pause of a few milliseconds
                            // lets the write that won finish instead of racing it again at once.
                            pauseUpTo(Duration.ofMillis(4));
                        } else if (written.sent()) {
                            unknown.add(written);
                        }
                    }
                    made.incrementAndGet();
                    half.countDown();
                }
            }));
        }
        half.await();
        midway.run();
        for (Thread client : clients) {
            client.join();
        }
        Answer last = http.get(urls.get(0), key, true);
        assertThat(last.status()).isEqualTo(200);
        return new Count(Long.parseLong(last.body()), conflicts.get(), List.copyOf(unknown));
    }

    @Test
    @Order(1)
    void createIfAbsentHasExactlyOneWinnerPerKey() throws Exception {
        int racers = 16;
        int keys = 100;
        ConcurrentHashMap<String, List<String>> winners = new ConcurrentHashMap<>();
        AtomicInteger refused = new AtomicInteger();
        AtomicInteger other = new AtomicInteger();
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int r = 0; r < racers; r++) {
            String racer = "racer-" + r;
            threads.add(Thread.ofPlatform().start(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (int k = 0; k < keys; k++) {
                    String key = "lock-" + k;
                    Answer answer = http.put(anyNode(), key, racer, false, "If-None-Match", "*");
                    switch (answer.status()) {
                        case 201 -> winners.computeIfAbsent(key, ignored -> new java.util.concurrent.CopyOnWriteArrayList<>()).add(racer);
                        case 412 -> refused.incrementAndGet();
                        default -> other.incrementAndGet();
                    }
                }
            }));
        }
        go.countDown();
        for (Thread thread : threads) {
            thread.join();
        }
        System.out.printf("create-if-absent: %d racers on %d keys: %d won, %d refused, %d other%n",
                racers, keys, winners.values().stream().mapToInt(List::size).sum(), refused.get(), other.get());
        assertThat(other.get()).as("answers neither 201 nor 412").isZero();
        assertThat(winners).hasSize(keys);
        winners.forEach((key, won) -> {
            assertThat(won).as("winners of %s", key).hasSize(1);
            assertThat(http.get(urls.get(2), key, true).body()).as("the value of %s", key).isEqualTo(won.get(0));
        });
        assertThat(refused.get()).isEqualTo((racers - 1) * keys);
    }

    /** Last: it leaves a node killed. */
    @Test
    @Order(4)
    void historiesUnderKillPauseAndRestartAreLinearizable() throws Exception {
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
            // Coordinators killed between their phases leave proposals half-done for the others.
            nodes.get(0).kill();
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

    private static void pauseUpTo(Duration most) {
        try {
            Thread.sleep(Duration.ofNanos(ThreadLocalRandom.current().nextLong(most.toNanos())));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void pause(Duration duration) throws InterruptedException {
        Thread.sleep(duration.toMillis());
    }
}
