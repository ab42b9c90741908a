package io.ringkv.repair;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.ringkv.ring.TokenRange.Interval;

/** Where a repair starts walking the ranges it shares with a peer. */
class RepairOrderTest {

    private static List<Interval> intervals(int count) {
        List<Interval> intervals = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            intervals.add(new Interval(i * 100L, i * 100L + 99));
        }
        return intervals;
    }

    private static final List<String> MEMBERS = List.of("http://c:8080", "http://a:8080", "http://b:8080");

    @Test
    void everyIntervalOnceInTokenOrderFromAPointOfItsOwn() {
        List<Interval> intervals = intervals(100);
        List<Interval> walked = RepairScheduler.startingAtOwnPoint(intervals, "http://b:8080", MEMBERS);
        assertThat(walked).containsExactlyInAnyOrderElementsOf(intervals);
        int start = intervals.indexOf(walked.get(0));
        for (int i = 0; i < walked.size(); i++) {
            assertThat(walked.get(i)).isEqualTo(intervals.get((start + i) % intervals.size()));
        }
    }

    /** Two or three peers repairing the same replica start a third of the way apart from each other. */
    @Test
    void theMembersStartEvenlySpread() {
        List<Interval> intervals = intervals(99);
        assertThat(intervals).hasSizeGreaterThanOrEqualTo(RepairScheduler.START_POINTS);
        assertThat(MEMBERS.stream().map(member -> intervals.indexOf(RepairScheduler.startingAtOwnPoint(intervals, member, MEMBERS).get(0))))
                .containsExactly(66, 0, 33);
    }

    /** Every range shared (as many members as the replication factor): one interval, the whole ring, cut to start apart. */
    @Test
    void theWholeRingIsCutSoThatMembersStartApart() {
        List<Interval> ring = List.of(new Interval(Long.MIN_VALUE, Long.MAX_VALUE));
        List<Interval> walked = RepairScheduler.startingAtOwnPoint(ring, "http://b:8080", MEMBERS);
        assertThat(walked).hasSize(RepairScheduler.START_POINTS);
        assertThat(walked.get(0).low()).as("a third of the way round").isEqualTo(walked.get(walked.size() - 1).high() + 1);
        assertThat(walked.get(0).low()).isBetween(Long.MIN_VALUE / 3 - (1L << 60), Long.MIN_VALUE / 3 + (1L << 60));
        assertThat(walked.stream().mapToDouble(RepairProgress::width).sum()).isEqualTo(0x1p64);
        assertThat(RepairScheduler.startingAtOwnPoint(List.of(), "http://c:8080", MEMBERS)).isEmpty();
    }
}
