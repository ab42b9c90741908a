package io.ringkv.security;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

class FailedTokenThrottleTest {

    private static final Duration WINDOW = Duration.ofSeconds(60);

    private final AtomicLong nanos = new AtomicLong();
    private final FailedTokenThrottle throttle = new FailedTokenThrottle(3, WINDOW, 100, nanos::get);

    @Test
    void anAddressIsRefusedOnceItFailedTooOftenUntilTheWindowEnds() {
        throttle.failed("10.0.0.1");
        throttle.failed("10.0.0.1");
        assertThat(throttle.refusedFor("10.0.0.1")).as("below the threshold").isEmpty();
        assertThat(throttle.refusesAny()).as("no address at the threshold").isFalse();

        nanos.addAndGet(Duration.ofSeconds(20).toNanos());
        throttle.failed("10.0.0.1");
        assertThat(throttle.refusedFor("10.0.0.1")).contains(Duration.ofSeconds(40));
        assertThat(throttle.refusedFor("10.0.0.2")).as("another address").isEmpty();
        assertThat(throttle.refusesAny()).isTrue();

        nanos.addAndGet(Duration.ofSeconds(40).toNanos() - 1);
        assertThat(throttle.refusesAny()).as("the last nanosecond of the window").isTrue();
        nanos.incrementAndGet();
        assertThat(throttle.refusesAny()).as("the window is over").isFalse();
        assertThat(throttle.refusedFor("10.0.0.1")).as("the window is over").isEmpty();
        throttle.failed("10.0.0.1");
        assertThat(throttle.refusedFor("10.0.0.1")).as("counted afresh").isEmpty();
    }

    @Test
    void failuresFurtherApartThanTheWindowAreNotCountedTogether() {
        for (int i = 0; i < 10; i++) {
            throttle.failed("10.0.0.1");
            nanos.addAndGet(WINDOW.dividedBy(2).toNanos());
            if (i % 2 == 1) {
                assertThat(throttle.refusedFor("10.0.0.1")).as("after failure %d", i).isEmpty();
            }
        }
    }

    @Test
    void manyAddressesCostBoundedMemoryTheLeastRecentlyFailedForgottenFirst() {
        var small = new FailedTokenThrottle(1, WINDOW, 1000, nanos::get);
        small.failed("guesser");
        for (int i = 0; i < 100_000; i++) {
            small.failed("10.1." + (i / 256) + "." + (i % 256));
            if (i % 500 == 0) {
                small.failed("guesser");
            }
        }
        assertThat(small.size()).isEqualTo(1000);
        assertThat(small.refusedFor("guesser")).as("still failing, so still remembered").isPresent();
        assertThat(small.refusedFor("10.1.0.0")).as("forgotten").isEmpty();
    }
}
