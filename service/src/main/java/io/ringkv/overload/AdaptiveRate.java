package io.ringkv.overload;

import java.util.ArrayDeque;
import java.util.Collections;
import java.util.Deque;

/**
 * How fast background transfers (repair, a rebuilt or joining node's pull, a leaving node's push)
 * may stream: as fast as the foreground allows. Once a period (a second) it is told the p99 of the
 * client requests the node coordinated in that period and whether a transfer used its budget, and
 * answers the rate for the next period, additive increase and multiplicative decrease as TCP's
 * congestion control does:
 * <ul>
 * <li>while the p99 stays within {@code latencyFactor} times the quiet p99 (the lowest of the last
 * {@value #QUIET_PERIODS} periods' p99, with {@value #SLACK_MILLIS} ms of slack for noise on fast
 * answers), the rate grows by {@code floor} a period, up to {@code ceiling};</li>
 * <li>past it, the rate halves, never below {@code floor};</li>
 * <li>a period without transfers starts the next one over from {@code floor}, so that a repair
 * that begins after a quiet spell does not begin at the ceiling.</li>
 * </ul>
 * A period without client requests has no p99 and does not hold the rate back. Plain Java, no clock
 * and no I/O: the periods are the calls.
 */
public final class AdaptiveRate {

    static final int QUIET_PERIODS = 120;
    static final double SLACK_MILLIS = 2;

    private final long floor;
    private final long ceiling;
    private final double latencyFactor;
    private final Deque<Double> recentP99s = new ArrayDeque<>();
    private long rate;

    public AdaptiveRate(long floor, long ceiling, double latencyFactor) {
        if (floor < 1 || ceiling < floor) {
            throw new IllegalArgumentException("need 1 <= floor <= ceiling, got " + floor + " and " + ceiling);
        }
        if (!(latencyFactor >= 1)) {
            throw new IllegalArgumentException("the latency factor must be at least 1, got " + latencyFactor);
        }
        this.floor = floor;
        this.ceiling = ceiling;
        this.latencyFactor = latencyFactor;
        this.rate = floor;
    }

    /** Bytes per second for the period under way. */
    public long rate() {
        return rate;
    }

    /**
     * One period is over: its client requests' p99 in milliseconds (NaN: there were none) and
     * whether a transfer used the budget. Returns the rate for the next period.
     */
    public long next(double p99Millis, boolean transferred) {
        boolean slowed = false;
        if (!Double.isNaN(p99Millis)) {
            recentP99s.addLast(p99Millis);
            if (recentP99s.size() > QUIET_PERIODS) {
                recentP99s.removeFirst();
            }
            double quiet = Collections.min(recentP99s);
            slowed = p99Millis > Math.max(quiet * latencyFactor, quiet + SLACK_MILLIS);
        }
        if (!transferred) {
            rate = floor;
        } else if (slowed) {
            rate = Math.max(floor, rate / 2);
        } else {
            rate = Math.min(ceiling, rate + floor);
        }
        return rate;
    }
}
