package io.ringkv.repair;

import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.DoubleAdder;

import io.ringkv.ring.TokenRange.Interval;

/**
 * How far one transfer with one peer has come (a repair, a join's pull, a leave's push), for the
 * repair endpoint and {@code /v0/cluster}: the share of its tokens compared, the keys found
 * different and moved, and the bytes sent or fetched. Safe to read while it runs.
 */
public final class RepairProgress {

    /** A snapshot, as the endpoints show it. */
    public record Snapshot(String kind, String peer, long startedMillis, double percent, long keysDifferent,
            long keysPushed, long keysPulled, long bytes, String outcome) {
    }

    private final String kind;
    private final String peer;
    private final long startedMillis;
    private final double totalWidth;
    private final DoubleAdder doneWidth = new DoubleAdder();
    private final AtomicLong keysDifferent = new AtomicLong();
    private final AtomicLong keysPushed = new AtomicLong();
    private final AtomicLong keysPulled = new AtomicLong();
    private final AtomicLong bytes = new AtomicLong();
    private volatile String outcome = "running";

    public RepairProgress(String kind, String peer, long startedMillis, List<Interval> intervals) {
        this.kind = kind;
        this.peer = peer;
        this.startedMillis = startedMillis;
        this.totalWidth = intervals.stream().mapToDouble(RepairProgress::width).sum();
    }

    /** How many tokens an interval holds, as a double: a whole ring's 2^64 does not fit a long. */
    static double width(Interval interval) {
        long difference = interval.high() - interval.low();
        return (difference >= 0 ? difference : difference + 0x1p64) + 1;
    }

    void compared(Interval interval) {
        doneWidth.add(width(interval));
    }

    void different(int keys) {
        keysDifferent.addAndGet(keys);
    }

    void pushed(int keys, long recordBytes) {
        keysPushed.addAndGet(keys);
        bytes.addAndGet(recordBytes);
    }

    void pulled(int keys, long recordBytes) {
        keysPulled.addAndGet(keys);
        bytes.addAndGet(recordBytes);
    }

    public void finished(String how) {
        outcome = how;
    }

    public long startedMillis() {
        return startedMillis;
    }

    public long keysDifferent() {
        return keysDifferent.get();
    }

    public Snapshot snapshot() {
        double percent = totalWidth == 0 ? 100 : Math.min(100, 100 * doneWidth.sum() / totalWidth);
        return new Snapshot(kind, peer, startedMillis, Math.round(percent * 10) / 10.0, keysDifferent.get(),
                keysPushed.get(), keysPulled.get(), bytes.get(), outcome);
    }
}
