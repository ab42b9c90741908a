package io.ringkv.record;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

class HybridClockTest {

    private final AtomicLong wallClock = new AtomicLong(1_700_000_000_000L);
    private final HybridClock clock = new HybridClock(wallClock::get, 500);

    @Test
    void followsPhysicalTime() {
        long first = clock.now();
        wallClock.addAndGet(5);
        long second = clock.now();
        assertThat(HybridClock.physicalMillisOf(first)).isEqualTo(1_700_000_000_000L);
        assertThat(HybridClock.physicalMillisOf(second)).isEqualTo(1_700_000_000_005L);
    }

    @Test
    void countsLogicallyWithinOneMillisecond() {
        long first = clock.now();
        long second = clock.now();
        assertThat(second).isEqualTo(first + 1);
        assertThat(HybridClock.physicalMillisOf(second)).isEqualTo(HybridClock.physicalMillisOf(first));
    }

    @Test
    void neverGoesBackwardsWhenTheWallClockDoes() {
        long before = clock.now();
        wallClock.addAndGet(-60_000);
        long after = clock.now();
        assertThat(after).isGreaterThan(before);
    }

    @Test
    void ordersAfterAnyObservedTimestamp() {
        long remote = (1_700_000_000_000L + 400) << HybridClock.LOGICAL_BITS;
        clock.observe(remote);
        assertThat(clock.now()).isGreaterThan(remote);
        clock.observe(5);
        assertThat(clock.now()).isGreaterThan(remote + 1);
    }

    /** Expiry is judged by it: a node that has seen a later write judges as that write's coordinator would. */
    @Test
    void physicalNowIsTheWallClockOrTheLatestTimestampSeenIfAhead() {
        assertThat(clock.physicalNow()).isEqualTo(1_700_000_000_000L);
        clock.observe((1_700_000_000_000L + 300) << HybridClock.LOGICAL_BITS);
        assertThat(clock.physicalNow()).isEqualTo(1_700_000_000_300L);
        long issued = clock.now();
        clock.physicalNow();
        assertThat(clock.now()).as("reading it issues no timestamp").isEqualTo(issued + 1);
        wallClock.addAndGet(1_000);
        assertThat(clock.physicalNow()).isEqualTo(1_700_000_001_000L);
    }

    @Test
    void refusesATimestampFurtherAheadThanTheMaxOffset() {
        long tooFar = (1_700_000_000_000L + 501) << HybridClock.LOGICAL_BITS;
        long justWithin = (1_700_000_000_000L + 500) << HybridClock.LOGICAL_BITS;
        assertThat(clock.observe(tooFar)).isFalse();
        assertThat(clock.now()).as("a refused timestamp drags nothing along").isLessThan(tooFar);
        assertThat(clock.refused()).as("and is counted").isEqualTo(1);
        assertThat(clock.observe(justWithin)).isTrue();
        assertThat(clock.now()).isGreaterThan(justWithin);
    }

    @Test
    void timestampAtIsTheFirstTimestampOfThatMillisecond() {
        long at = HybridClock.timestampAt(1_700_000_000_123L);
        assertThat(HybridClock.physicalMillisOf(at)).isEqualTo(1_700_000_000_123L);
        assertThat(HybridClock.physicalMillisOf(at - 1)).isEqualTo(1_700_000_000_122L);
    }

    @Test
    void staysMonotonicUnderConcurrentUse() throws InterruptedException {
        HybridClock real = HybridClock.system(500);
        long[][] seen = new long[4][10_000];
        Thread[] threads = new Thread[4];
        for (int t = 0; t < threads.length; t++) {
            int index = t;
            threads[t] = new Thread(() -> {
                for (int i = 0; i < seen[index].length; i++) {
                    seen[index][i] = real.now();
                }
            });
            threads[t].start();
        }
        for (Thread thread : threads) {
            thread.join();
        }
        java.util.Set<Long> all = new java.util.HashSet<>();
        for (long[] perThread : seen) {
            for (int i = 1; i < perThread.length; i++) {
                assertThat(perThread[i]).isGreaterThan(perThread[i - 1]);
            }
            for (long value : perThread) {
                all.add(value);
            }
        }
        assertThat(all).as("every reading is unique").hasSize(4 * 10_000);
    }
}
