package io.ringkv.health;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.web.reactive.function.client.WebClient;

import io.ringkv.support.TestNode;
import reactor.core.publisher.Flux;

/**
 * One of three nodes answers replica calls a whole second late. A GET with 2/3 never waits for it,
 * because the coordinator answers after the two fast replicas; with 3/3 every request does.
 * Requests go out at a steady rate whatever the answers' speed (an open model), and latency counts
 * from the moment each request was due. The delay is far above any pause of a busy machine, so
 * this tests the behaviour, not the speed: the latency itself is measured by the k6 benchmark's
 * slow-node scenario (loadtest/run.sh with SLOW_NODE_DELAY).
 */
class SlowNodeLatencyTest {

    private static final int RATE_PER_SECOND = 50;
    private static final int REQUESTS = 200;
    private static final int KEYS = 20;
    private static final Duration DELAY = Duration.ofSeconds(1);

    @TempDir
    Path dataRoot;

    @Test
    void twoOfThreeDoesNotWaitForASlowReplica() {
        List<Integer> ports = TestNode.freePorts(3);
        // Slow, but not so slow that the breakers give up on it: this is about waiting for it.
        Map<String, Object> patient = Map.of("ringkv.health.breaker.slow-call-threshold", "10s");
        Map<String, Object> slow = Map.of("ringkv.testing.replica-delay", DELAY.toMillis() + "ms",
                "ringkv.health.breaker.slow-call-threshold", "10s");
        try (TestNode a = TestNode.create(ports.get(0), dataRoot.resolve("a"), ports, patient).start();
             TestNode b = TestNode.create(ports.get(1), dataRoot.resolve("b"), ports, patient).start();
             TestNode c = TestNode.create(ports.get(2), dataRoot.resolve("c"), ports, slow).start()) {
            TestNode.awaitEachSeesEveryOtherHoldData(List.of(a, b, c));
            List<WebClient> coordinators = List.of(WebClient.create(a.url()), WebClient.create(b.url()));
            Flux.range(0, KEYS)
                    .flatMap(key -> coordinators.get(0).put().uri("/v0/entity?id=key{k}&replicas=3/3", key)
                            .bodyValue(new byte[1024]).retrieve().toBodilessEntity())
                    .blockLast(Duration.ofSeconds(30));
            measure(coordinators, "2/3"); // warm-up: JIT, connection pools
            long[] twoOfThree = measure(coordinators, "2/3");
            long[] threeOfThree = measure(coordinators, "3/3");
            System.out.printf("GET with one node %d ms slow, %d req/s: 2/3 p50 %.1f ms max %.1f ms; 3/3 p50 %.1f ms max %.1f ms%n",
                    DELAY.toMillis(), RATE_PER_SECOND, ms(percentile(twoOfThree, 50)), ms(twoOfThree[twoOfThree.length - 1]),
                    ms(percentile(threeOfThree, 50)), ms(threeOfThree[threeOfThree.length - 1]));
            assertThat(ms(twoOfThree[twoOfThree.length - 1])).as("the slowest 2/3 GET, in ms").isLessThan(DELAY.toMillis() / 2.0);
            assertThat(ms(percentile(threeOfThree, 1))).as("the fastest 3/3 GET, in ms").isGreaterThanOrEqualTo(DELAY.toMillis());

            // The slow replica is not cancelled when the client has its answer: it applies the write too.
            for (int i = 0; i < 20; i++) {
                coordinators.get(0).put().uri("/v0/entity?id=late{i}&replicas=2/3", i).bodyValue("v".getBytes())
                        .retrieve().toBodilessEntity().block(Duration.ofSeconds(10));
            }
            Awaitility.await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
                for (int i = 0; i < 20; i++) {
                    assertThat(c.stored("late" + i)).as("the slow replica's copy of late" + i).isPresent();
                }
            });
        }
    }

    private static long[] measure(List<WebClient> coordinators, String replicas) {
        long[] latencies = Flux.interval(Duration.ofMillis(1000 / RATE_PER_SECOND))
                .take(REQUESTS)
                .flatMap(i -> {
                    long due = System.nanoTime();
                    return coordinators.get((int) (i % 2)).get()
                            .uri("/v0/entity?id=key{k}&replicas={r}", i % KEYS, replicas)
                            .retrieve().toBodilessEntity()
                            .map(response -> System.nanoTime() - due);
                }, 256)
                .collectList()
                .map(list -> list.stream().mapToLong(Long::longValue).sorted().toArray())
                .block(Duration.ofSeconds(60));
        assertThat(latencies).hasSize(REQUESTS);
        return latencies;
    }

    private static long percentile(long[] sorted, double p) {
        return sorted[(int) Math.ceil(p / 100 * sorted.length) - 1];
    }

    private static double ms(long nanos) {
        return nanos / 1e6;
    }
}
