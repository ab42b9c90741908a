package io.ringkv.overload;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Bytes held at once, up to a bound. Nothing waits: a hold past the bound is refused at once, so
 * no request can keep part of the bound while it waits for the rest. A hold alone always fits, so
 * a value the node accepts is never refused for its size only.
 */
public final class ByteBound {

    private final long max;
    private final AtomicLong held = new AtomicLong();
    /** Threads in {@link #holdWithin}: only then does a release take the monitor to wake them. */
    private final AtomicInteger waiting = new AtomicInteger();

    public ByteBound(long max) {
        this.max = max;
    }

    /** Holds {@code bytes} more; false, holding nothing more, when that would pass the bound. */
    public boolean tryHold(long bytes) {
        return tryHold(bytes, 0);
    }

    /**
     * Like {@link #tryHold(long)} for a caller that holds {@code alreadyHeld} bytes already: when
     * those are all that is held, it fits whatever the bound, so a read of one large value may
     * gather it from every replica even if together they pass the bound.
     */
    public boolean tryHold(long bytes, long alreadyHeld) {
        long total = held.addAndGet(bytes);
        if (total > max && total != bytes + alreadyHeld) {
            held.addAndGet(-bytes);
            return false;
        }
        return true;
    }

    /** Holds {@code bytes} more whatever the bound: for what was let in and must finish. */
    public void hold(long bytes) {
        held.addAndGet(bytes);
    }

    /** Whether {@code bytes} more would fit now, without holding them. */
    public boolean hasRoomFor(long bytes) {
        return held.get() + bytes <= max;
    }

    /**
     * Holds {@code bytes} more, waiting up to {@code patience} for room; false, holding nothing
     * more, if none came. Blocks: for threads that may (storage threads), never for an event loop.
     */
    public boolean holdWithin(long bytes, Duration patience) throws InterruptedException {
        if (tryHold(bytes)) {
            return true;
        }
        long deadline = System.nanoTime() + patience.toNanos();
        waiting.incrementAndGet();
        try {
            synchronized (this) {
                while (!tryHold(bytes)) {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        return false;
                    }
                    TimeUnit.NANOSECONDS.timedWait(this, left);
                }
                return true;
            }
        } finally {
            waiting.decrementAndGet();
        }
    }

    /** Gives back bytes held with {@link #tryHold} or {@link #holdWithin}. */
    public void release(long bytes) {
        held.addAndGet(-bytes);
        if (waiting.get() > 0) {
            synchronized (this) {
                notifyAll();
            }
        }
    }

    public long held() {
        return held.get();
    }
}
