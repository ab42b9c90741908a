package io.ringkv.logging;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

class RateLimitedLogTest {

    @Test
    void logsOneLinePerPeriodWithTheCountSuppressedSince() {
        var now = new AtomicLong(1_000);
        var limit = new RateLimitedLog(Duration.ofNanos(100), now::get);
        assertThat(limit.record()).isZero();
        assertThat(limit.record()).isEqualTo(-1);
        now.addAndGet(99);
        assertThat(limit.record()).isEqualTo(-1);
        now.addAndGet(1);
        assertThat(limit.record()).isEqualTo(2);
        assertThat(limit.record()).isEqualTo(-1);
        now.addAndGet(1_000);
        assertThat(limit.record()).isEqualTo(1);
    }
}
