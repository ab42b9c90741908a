package io.ringkv.logging;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * At most one line per period for events that may come in floods (refused requests from a
 * misconfigured client or a scanner, malformed requests): the first event of a period is logged,
 * with how many were suppressed since the last line; the rest are only counted.
 */
public final class RateLimitedLog {

    private final long periodNanos;
    private final LongSupplier nanoClock;
    private final AtomicLong nextLineAt;
    private final AtomicLong suppressed = new AtomicLong();

    public RateLimitedLog(Duration period, LongSupplier nanoClock) {
        this.periodNanos = period.toNanos();
        this.nanoClock = nanoClock;
        this.nextLineAt = new AtomicLong(nanoClock.getAsLong());
    }

    /**
     * Records an event: -1 if it is not to be logged, otherwise how many events were suppressed
     * since the last line (which the line should say).
     */
    public long record() {
        long now = nanoClock.getAsLong();
        long due = nextLineAt.get();
        if (now - due >= 0 && nextLineAt.compareAndSet(due, now + periodNanos)) {
            return suppressed.getAndSet(0);
        }
        suppressed.incrementAndGet();
        return -1;
    }
}
