package io.ringkv.overload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class AdaptiveRateTest {

    private static final long MB = 1_000_000;
    private final AdaptiveRate rate = new AdaptiveRate(8 * MB, 64 * MB, 2);

    @Test
    void startsAtTheFloorAndClimbsByItWhileTheForegroundStaysFast() {
        assertThat(rate.rate()).isEqualTo(8 * MB);
        assertThat(rate.next(5, true)).isEqualTo(16 * MB);
        assertThat(rate.next(6, true)).isEqualTo(24 * MB);
        for (int i = 0; i < 10; i++) {
            rate.next(9, true);
        }
        assertThat(rate.rate()).as("never past the ceiling").isEqualTo(64 * MB);
    }

    @Test
    void halvesWhenThePercentileDoublesItsQuietValueButNeverGoesBelowTheFloor() {
        for (int i = 0; i < 7; i++) {
            rate.next(10, true);
        }
        assertThat(rate.rate()).isEqualTo(64 * MB);
        assertThat(rate.next(20, true)).as("twice the quiet p99 is still allowed").isEqualTo(64 * MB);
        assertThat(rate.next(21, true)).isEqualTo(32 * MB);
        assertThat(rate.next(40, true)).isEqualTo(16 * MB);
        assertThat(rate.next(40, true)).isEqualTo(8 * MB);
        assertThat(rate.next(40, true)).isEqualTo(8 * MB);
        assertThat(rate.next(12, true)).as("back within bounds: climbs again").isEqualTo(16 * MB);
    }

    @Test
    void fastAnswersGetTwoMillisecondsOfSlackForNoise() {
        rate.next(0.5, true);
        assertThat(rate.next(2.4, true)).as("within 0.5 + 2 ms").isEqualTo(24 * MB);
        assertThat(rate.next(2.6, true)).isEqualTo(12 * MB);
    }

    @Test
    void theQuietValueIsTheLowestOfTheRecentPeriodsOnly() {
        rate.next(1, true);
        for (int i = 1; i < AdaptiveRate.QUIET_PERIODS; i++) {
            rate.next(50, true);
        }
        assertThat(rate.rate()).as("50 ms against a quiet 1 ms keeps the floor").isEqualTo(8 * MB);
        assertThat(rate.next(50, true)).as("the 1 ms period has aged out: 50 ms is the quiet value now")
                .isEqualTo(16 * MB);
    }

    @Test
    void aPeriodWithoutTransfersStartsTheNextOverFromTheFloor() {
        for (int i = 0; i < 5; i++) {
            rate.next(5, true);
        }
        assertThat(rate.rate()).isEqualTo(48 * MB);
        assertThat(rate.next(5, false)).isEqualTo(8 * MB);
    }

    @Test
    void aPeriodWithoutClientRequestsDoesNotHoldTheRateBack() {
        rate.next(5, true);
        assertThat(rate.next(Double.NaN, true)).isEqualTo(24 * MB);
        assertThat(rate.next(9, true)).as("the quiet value is still 5 ms").isEqualTo(32 * MB);
    }

    @Test
    void aCeilingAtTheFloorKeepsTheRateFixed() {
        AdaptiveRate fixed = new AdaptiveRate(8 * MB, 8 * MB, 2);
        assertThat(fixed.next(1, true)).isEqualTo(8 * MB);
        assertThat(fixed.next(100, true)).isEqualTo(8 * MB);
    }

    @Test
    void refusesSettingsItCannotWorkWith() {
        assertThatThrownBy(() -> new AdaptiveRate(0, 10, 2)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new AdaptiveRate(10, 5, 2)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new AdaptiveRate(10, 20, 0.5)).isInstanceOf(IllegalArgumentException.class);
    }
}
