package io.ringkv.replication;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ScheduledFuture;
import io.netty.util.internal.ThreadExecutorMap;
import reactor.core.Disposable;
import reactor.core.scheduler.Schedulers;

/**
 * Runs a task after a delay, on the calling thread's own event loop when it has one. A request's
 * deadline and hedge are set on the loop that handles it, where scheduling is a cheap queue
 * insertion on the same thread; Reactor's timeout operators would hand every one of them to a
 * shared scheduler thread and back.
 */
final class Deadlines {

    private Deadlines() {
    }

    static Disposable after(Duration delay, Runnable task) {
        EventExecutor loop = ThreadExecutorMap.currentExecutor();
        if (loop == null) {
            return Schedulers.parallel().schedule(task, delay.toNanos(), TimeUnit.NANOSECONDS);
        }
        ScheduledFuture<?> scheduled = loop.schedule(task, delay.toNanos(), TimeUnit.NANOSECONDS);
        return () -> scheduled.cancel(false);
    }
}
