package io.ringkv.record;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

/**
 * A hybrid logical clock: physical milliseconds in the high 48 bits, a logical counter in the
 * low 16. Its readings never go backwards on a node, even when the wall clock does, and they stay
 * close to physical time, so last-write-wins picks the write a user would call the later one.
 *
 * <p>After {@link #observe(long)} of a timestamp from another node, every later reading here is
 * greater: a client that writes through one node and then through another sees its second write
 * win, even if the second node's wall clock is behind.
 */
public final class HybridClock {

    static final int LOGICAL_BITS = 16;

    private final LongSupplier physicalMillis;
    private final long maxOffsetMillis;
    private final AtomicLong last = new AtomicLong();
    private final LongAdder refused = new LongAdder();

    /**
     * @param maxOffsetMillis how far ahead of this clock a timestamp from elsewhere may be: a node
     *                        whose clock runs further ahead must not drag every clock it talks to along
     */
    public HybridClock(LongSupplier physicalMillis, long maxOffsetMillis) {
        this.physicalMillis = physicalMillis;
        this.maxOffsetMillis = maxOffsetMillis;
    }

    public static HybridClock system(long maxOffsetMillis) {
        return new HybridClock(System::currentTimeMillis, maxOffsetMillis);
    }

    /** A timestamp greater than every one this clock has issued or observed. */
    public long now() {
        long physical = physicalMillis.getAsLong() << LOGICAL_BITS;
        // When the counter overflows 16 bits it carries into the millisecond: still monotonic.
        return last.updateAndGet(previous -> Math.max(physical, previous + 1));
    }

    /**
     * The physical milliseconds of this clock now, without issuing a timestamp: the wall clock, or
     * the latest timestamp issued or observed if that is ahead. What expiry is judged by: a node
     * that has seen a write stamped after a value's expiry time sees that value expired.
     */
    public long physicalNow() {
        return Math.max(physicalMillis.getAsLong(), physicalMillisOf(last.get()));
    }

    /**
     * Takes in a timestamp from another node (a write to store, a read's answer), so that this
     * clock's next readings are later than it.
     *
     * @return false, adopting nothing, when it is more than the maximum offset ahead of this
     *         clock: the caller refuses what carried it
     */
    public boolean observe(long remoteTimestamp) {
        if (!accepts(remoteTimestamp)) {
            refused.increment();
            return false;
        }
        last.accumulateAndGet(remoteTimestamp, Math::max);
        return true;
    }

    /** Whether {@link #observe} would take the timestamp in: within the maximum offset. Counts nothing. */
    public boolean accepts(long remoteTimestamp) {
        return acceptsMillis(physicalMillisOf(remoteTimestamp));
    }

    /** Whether a moment in milliseconds from another node (a repair's start) is within the maximum offset of this clock. */
    public boolean acceptsMillis(long remoteMillis) {
        return remoteMillis <= physicalMillis.getAsLong() + maxOffsetMillis;
    }

    /** How many timestamps {@link #observe} refused since the start. */
    public long refused() {
        return refused.sum();
    }

    public static long physicalMillisOf(long timestamp) {
        return timestamp >>> LOGICAL_BITS;
    }

    /** The smallest timestamp of the given millisecond: every timestamp issued later is greater. */
    public static long timestampAt(long physicalMillis) {
        return physicalMillis << LOGICAL_BITS;
    }
}
