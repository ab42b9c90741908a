package io.ringkv.overload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

class ThrottleTest {

    private final AtomicLong nanos = new AtomicLong(1_000_000_000_000L);
    private final Throttle throttle = new Throttle(1000, nanos::get);

    @Test
    void aQuietThrottleLetsATenthOfASecondsWorthThroughAtOnce() {
        assertThat(throttle.reserve(100)).isEqualTo(Duration.ZERO);
        assertThat(throttle.reserve(500)).isEqualTo(Duration.ofMillis(500));
    }

    @Test
    void aSteadyStreamIsPacedToTheRate() {
        throttle.reserve(100);
        Duration waited = Duration.ZERO;
        for (int i = 0; i < 10; i++) {
            waited = throttle.reserve(100);
        }
        assertThat(waited).as("1000 bytes beyond the burst at 1000 B/s").isEqualTo(Duration.ofSeconds(1));
        nanos.addAndGet(Duration.ofSeconds(1).toNanos());
        assertThat(throttle.reserve(0)).isEqualTo(Duration.ZERO);
    }

    @Test
    void idleTimeBuildsUpNoMoreThanTheBurst() {
        nanos.addAndGet(Duration.ofHours(1).toNanos());
        assertThat(throttle.reserve(100)).isEqualTo(Duration.ZERO);
        assertThat(throttle.reserve(1000)).isEqualTo(Duration.ofSeconds(1));
    }

    @Test
    void refusesANonPositiveRate() {
        assertThatThrownBy(() -> new Throttle(0, nanos::get)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aNewRateTakesEffectForWhatIsReservedNext() {
        throttle.reserve(100);
        throttle.setBytesPerSecond(10_000);
        assertThat(throttle.reserve(1000)).as("1000 bytes at 10,000 B/s").isEqualTo(Duration.ofMillis(100));
        assertThat(throttle.bytesPerSecond()).isEqualTo(10_000);
        assertThatThrownBy(() -> throttle.setBytesPerSecond(0)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void tellsHowMuchWasReservedSinceItWasLastAsked() {
        assertThat(throttle.takeReserved()).isZero();
        throttle.reserve(100);
        throttle.reserve(250);
        assertThat(throttle.takeReserved()).isEqualTo(350);
        assertThat(throttle.takeReserved()).isZero();
    }
}
