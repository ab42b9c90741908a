package io.ringkv.overload;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Bytes held at once, up to a bound. Nothing waits: a hold past the bound is refused at once, so
 * no request can keep part of the bound while it waits for the rest. A hold alone always fits, so
 * a value the node accepts is never refused for its size only.
 */
public final class ByteBound {

    private final long max;
    private final AtomicLong held = new AtomicLong();

    public ByteBound(long max) {
        this.max = max;
    }

    /** Holds {@code bytes} more; false, holding nothing more, when that would pass the bound. */
    public boolean tryHold(long bytes) {
        long total = held.addAndGet(bytes);
        if (total > max && total != bytes) {
            held.addAndGet(-bytes);
            return false;
        }
        return true;
    }

    /** Whether {@code bytes} more would fit now, without holding them. */
    public boolean hasRoomFor(long bytes) {
        return held.get() + bytes <= max;
    }

    /** Gives back bytes held with {@link #tryHold}. */
    public void release(long bytes) {
        held.addAndGet(-bytes);
    }

    public long held() {
        return held.get();
    }
}
