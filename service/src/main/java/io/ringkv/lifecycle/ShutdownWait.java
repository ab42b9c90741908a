package io.ringkv.lifecycle;

import org.springframework.context.SmartLifecycle;

/**
 * A step of the node's shutdown that holds it until something has ended (client requests, replica
 * calls): nothing to start, a blocking wait when the application context stops, in the phase each
 * step names. An interrupt ends the wait and is passed on to the stopping thread.
 */
public abstract class ShutdownWait implements SmartLifecycle {

    private volatile boolean running;

    /** What the shutdown waits for; it may block. */
    protected abstract void awaitEnd() throws InterruptedException;

    @Override
    public final void start() {
        running = true;
    }

    @Override
    public final void stop() {
        running = false;
        try {
            awaitEnd();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public final boolean isRunning() {
        return running;
    }
}
