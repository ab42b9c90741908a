package io.ringkv.lifecycle;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/**
 * Blocking waits for a condition that nothing signals (requests or calls in progress, the ring
 * becoming known): it is polled, within a limit. For the moments a node starts and stops, when a
 * thread may block.
 */
public final class Polling {

    private Polling() {
    }

    /** Until {@code done} holds, checked every {@code poll}, for at most {@code max}; whether it came to hold. */
    public static boolean await(BooleanSupplier done, Duration max, Duration poll) throws InterruptedException {
        return awaitQuiet(() -> !done.getAsBoolean(), Duration.ZERO, max, poll);
    }

    /**
     * Until {@code busy} has been false for {@code quiet} on end, checked every {@code poll}, for at
     * most {@code max}; whether it got quiet. The quiet time counts from the start: a wait that
     * finds nothing busy still lasts {@code quiet}, for whatever was about to begin.
     */
    public static boolean awaitQuiet(BooleanSupplier busy, Duration quiet, Duration max, Duration poll)
            throws InterruptedException {
        long started = System.nanoTime();
        long deadline = started + max.toNanos();
        long quietSince = started;
        while (true) {
            if (busy.getAsBoolean()) {
                quietSince = System.nanoTime();
            } else if (System.nanoTime() - quietSince >= quiet.toNanos()) {
                return true;
            }
            if (System.nanoTime() - deadline >= 0) {
                return false;
            }
            Thread.sleep(poll);
        }
    }
}
