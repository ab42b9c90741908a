package io.ringkv.overload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

class RecentLatencyTest {

    private final RecentLatency latency = new RecentLatency();

    @Test
    void givesThe99thPercentileOfWhatWasRecordedSinceTheLastLook() {
        for (int i = 0; i < 990; i++) {
            latency.record(TimeUnit.MILLISECONDS.toNanos(1));
        }
        for (int i = 0; i < 10; i++) {
            latency.record(TimeUnit.MILLISECONDS.toNanos(100));
        }
        assertThat(latency.takeP99Millis()).isCloseTo(1, within(0.02));
        latency.record(TimeUnit.MILLISECONDS.toNanos(40));
        assertThat(latency.takeP99Millis()).as("only what came since").isCloseTo(40, within(0.5));
    }

    @Test
    void nothingRecordedHasNoPercentile() {
        assertThat(latency.takeP99Millis()).isNaN();
    }

    @Test
    void anAnswerPastAMinuteCountsAsAMinute() {
        latency.record(TimeUnit.HOURS.toNanos(2));
        assertThat(latency.takeP99Millis()).isCloseTo(60_000, within(600.0));
    }
}
