package io.ringkv.replication;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ScheduledFuture;
import io.netty.util.internal.ThreadExecutorMap;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * Runs a task after a delay, on the calling thread's own event loop when it has one. A request's
 * deadline and hedge are set on the loop that handles it, where scheduling is a cheap queue
 * insertion on the same thread; Reactor's timeout operators would hand every one of them to a
 * shared scheduler thread and back.
 */
public final class Deadlines {

    private Deadlines() {
    }

    /**
     * Like {@link Mono#delay(Duration)}, emitting 0 after the delay, but timed on the subscriber's
     * event loop: for {@code timeout(Publisher)}, whose timer is otherwise set and, nearly
     * always, cancelled again on another thread for every request.
     */
    public static Mono<Long> delay(Duration delay) {
        return Mono.create(sink -> sink.onCancel(after(delay, () -> sink.success(0L))));
    }

    public static Disposable after(Duration delay, Runnable task) {
        EventExecutor loop = ThreadExecutorMap.currentExecutor();
        if (loop == null) {
            return Schedulers.parallel().schedule(task, delay.toNanos(), TimeUnit.NANOSECONDS);
        }
        ScheduledFuture<?> scheduled = loop.schedule(task, delay.toNanos(), TimeUnit.NANOSECONDS);
        return () -> scheduled.cancel(false);
    }
}
