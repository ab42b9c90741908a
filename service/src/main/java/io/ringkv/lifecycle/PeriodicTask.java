package io.ringkv.lifecycle;

import java.time.Duration;
import java.util.function.Consumer;
import java.util.function.Supplier;

import org.springframework.context.SmartLifecycle;

import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * Background work that runs in rounds while the node runs (anti-entropy, hint replay, tombstone
 * purge): started with the application context, disposed when it stops. One place for the
 * start/stop bookkeeping, so that every such task stops alike.
 */
public abstract class PeriodicTask implements SmartLifecycle {

    private volatile Disposable rounds;

    /** Subscribes the task's rounds; null when the task is off and nothing runs. */
    protected abstract Disposable begin();

    /**
     * A round every {@code every} on {@code on}, one at a time: a tick that comes while a round
     * still runs is dropped rather than queued, and a round that fails is handed to
     * {@code failed} and does not end the rounds to come.
     */
    protected static Flux<Object> everyPeriod(Duration every, Scheduler on, Supplier<Mono<?>> round,
            Consumer<Throwable> failed) {
        return Flux.interval(every, every, on)
                .onBackpressureDrop()
                .concatMap(tick -> round.get().cast(Object.class).onErrorResume(error -> {
                    failed.accept(error);
                    return Mono.empty();
                }), 1);
    }

    @Override
    public final void start() {
        rounds = begin();
    }

    @Override
    public final void stop() {
        Disposable running = rounds;
        if (running != null) {
            running.dispose();
        }
    }

    @Override
    public final boolean isRunning() {
        Disposable running = rounds;
        return running != null && !running.isDisposed();
    }
}
