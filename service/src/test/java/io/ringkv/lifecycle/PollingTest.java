package io.ringkv.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

class PollingTest {

    private static final Duration POLL = Duration.ofMillis(1);

    @Test
    void returnsAsSoonAsTheConditionHolds() throws InterruptedException {
        var checks = new AtomicInteger();
        assertThat(Polling.await(() -> checks.incrementAndGet() >= 3, Duration.ofSeconds(5), POLL)).isTrue();
        assertThat(checks).hasValue(3);
    }

    @Test
    void givesUpAtTheLimit() throws InterruptedException {
        long started = System.nanoTime();
        assertThat(Polling.await(() -> false, Duration.ofMillis(50), POLL)).isFalse();
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(Duration.ofMillis(50));
    }

    @Test
    void quietMeansNothingBusyForTheWholeQuietTime() throws InterruptedException {
        var checks = new AtomicInteger();
        long started = System.nanoTime();
        // Busy for the first ten checks, idle after: quiet only 30 ms after the last busy check.
        assertThat(Polling.awaitQuiet(() -> checks.incrementAndGet() <= 10, Duration.ofMillis(30), Duration.ofSeconds(5), POLL))
                .isTrue();
        assertThat(checks.get()).isGreaterThan(11);
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(Duration.ofMillis(30));
    }

    @Test
    void neverQuietGivesUpAtTheLimit() throws InterruptedException {
        assertThat(Polling.awaitQuiet(() -> true, Duration.ZERO, Duration.ofMillis(30), POLL)).isFalse();
    }
}
