package io.ringkv.overload;

import java.time.Duration;
import java.util.function.LongSupplier;

/**
 * Paces background transfers to a rate in bytes per second, so that repair, hint replay and data
 * movement share the disk and the network with client requests instead of taking them over.
 * Callers reserve what they are about to send and wait the returned delay (a timer, never a
 * sleeping thread). The rate may change as it runs ({@link TransferPacing} sets it from the
 * foreground's latency). Plain Java: the clock is passed in, so the pacing is tested directly.
 */
public final class Throttle {

    /**
     * How far a quiet spell lets a transfer run ahead: a tenth of a second's worth of bytes at most.
     * A repair is quiet between its bursts of moves while it compares digests; with a second's
     * worth banked, batched moves sent that second at once, and client requests waited behind it.
     */
    private static final long BURST_NANOS = 100_000_000L;

    private final LongSupplier nanoTime;
    private long bytesPerSecond;
    private long nextFreeNanos;
    private long reservedSinceLastLook;

    public Throttle(long bytesPerSecond, LongSupplier nanoTime) {
        this.bytesPerSecond = requirePositive(bytesPerSecond);
        this.nanoTime = nanoTime;
        this.nextFreeNanos = nanoTime.getAsLong() - BURST_NANOS;
    }

    public static Throttle of(long bytesPerSecond) {
        return new Throttle(bytesPerSecond, System::nanoTime);
    }

    /** Takes {@code bytes} from the budget; the caller waits the returned delay before sending them. */
    public synchronized Duration reserve(long bytes) {
        long now = nanoTime.getAsLong();
        long start = Math.max(nextFreeNanos, now - BURST_NANOS);
        nextFreeNanos = start + (long) (bytes * 1e9 / bytesPerSecond);
        reservedSinceLastLook += bytes;
        return nextFreeNanos > now ? Duration.ofNanos(nextFreeNanos - now) : Duration.ZERO;
    }

    public synchronized long bytesPerSecond() {
        return bytesPerSecond;
    }

    /** From now on; what is already reserved keeps its place. */
    public synchronized void setBytesPerSecond(long bytesPerSecond) {
        this.bytesPerSecond = requirePositive(bytesPerSecond);
    }

    /** Bytes reserved since the last call: whether, and how much, transfers used the budget. */
    public synchronized long takeReserved() {
        long reserved = reservedSinceLastLook;
        reservedSinceLastLook = 0;
        return reserved;
    }

    private static long requirePositive(long bytesPerSecond) {
        if (bytesPerSecond < 1) {
            throw new IllegalArgumentException("the rate must be at least 1 byte per second");
        }
        return bytesPerSecond;
    }
}
