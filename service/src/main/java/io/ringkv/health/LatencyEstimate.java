package io.ringkv.health;

import java.util.concurrent.atomic.AtomicLong;

/**
 * A peer's recent call latency as an exponentially weighted moving average: the newest call
 * counts for {@code weight}, older ones fade. It lets a read ask the peers that answer fastest
 * now; a peer that turns slow is passed over within a few calls, and writes (which go to every
 * replica) keep measuring it, so it is asked again once it is fast. Lock-free: calls end on any thread.
 */
public final class LatencyEstimate {

    private static final long UNKNOWN = Double.doubleToLongBits(Double.NaN);

    private final double weight;
    private final AtomicLong millisBits = new AtomicLong(UNKNOWN);

    public LatencyEstimate(double weight) {
        if (!(weight > 0 && weight <= 1)) {
            throw new IllegalArgumentException("weight must be in (0, 1], got " + weight);
        }
        this.weight = weight;
    }

    public void record(double millis) {
        millisBits.updateAndGet(bits -> {
            double current = Double.longBitsToDouble(bits);
            // The first call sets the estimate instead of being averaged with a made-up value.
            return Double.doubleToLongBits(Double.isNaN(current) ? millis : current + weight * (millis - current));
        });
    }

    /** The estimate in milliseconds; 0 before any call, so that an unmeasured peer gets tried. */
    public double millis() {
        double millis = Double.longBitsToDouble(millisBits.get());
        return Double.isNaN(millis) ? 0 : millis;
    }
}
