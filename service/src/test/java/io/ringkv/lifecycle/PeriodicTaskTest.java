package io.ringkv.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

class PeriodicTaskTest {

    /** Every other round fails. */
    private static final class Flaky extends PeriodicTask {
        final AtomicInteger rounds = new AtomicInteger();
        final List<Throwable> failures = new CopyOnWriteArrayList<>();
        final boolean off;

        Flaky(boolean off) {
            this.off = off;
        }

        @Override
        protected Disposable begin() {
            return off ? null : everyPeriod(Duration.ofMillis(5), Schedulers.parallel(),
                    () -> rounds.incrementAndGet() % 2 == 0 ? Mono.error(new IllegalStateException("round")) : Mono.empty(),
                    failures::add).subscribe();
        }
    }

    @Test
    void aFailedRoundDoesNotEndTheRoundsAndStopEndsThem() throws InterruptedException {
        var task = new Flaky(false);
        task.start();
        assertThat(task.isRunning()).isTrue();
        assertThat(Polling.await(() -> task.rounds.get() >= 6, Duration.ofSeconds(5), Duration.ofMillis(1))).isTrue();
        assertThat(task.failures).isNotEmpty();

        task.stop();
        assertThat(task.isRunning()).isFalse();
        int stoppedAt = task.rounds.get();
        Thread.sleep(50);
        assertThat(task.rounds.get()).isEqualTo(stoppedAt);
    }

    @Test
    void aTaskThatIsOffDoesNotRun() {
        var task = new Flaky(true);
        task.start();
        assertThat(task.isRunning()).isFalse();
        task.stop();
    }
}
