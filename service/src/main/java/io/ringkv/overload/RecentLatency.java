package io.ringkv.overload;

import java.util.concurrent.TimeUnit;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * What the foreground's requests took since the last look: the signal {@link AdaptiveRate} paces
 * background transfers by. HdrHistogram's {@link Recorder} records without locks from any event
 * loop and hands the reader one histogram per interval.
 */
public final class RecentLatency {

    /** Longer answers are counted as this long: the p99 only has to tell slow from fast. */
    private static final long LONGEST_NANOS = TimeUnit.MINUTES.toNanos(1);

    private final Recorder recorder = new Recorder(LONGEST_NANOS, 2);
    private Histogram interval;

    public void record(long nanos) {
        recorder.recordValue(Math.clamp(nanos, 0, LONGEST_NANOS));
    }

    /**
     * The 99th percentile, in milliseconds, of what was recorded since the last call; NaN when
     * nothing was. Called by one reader at a time; it may wait briefly for recordings under way,
     * so never on an event loop.
     */
    public synchronized double takeP99Millis() {
        interval = recorder.getIntervalHistogram(interval);
        return interval.getTotalCount() == 0 ? Double.NaN : interval.getValueAtPercentile(99) / 1e6;
    }
}
