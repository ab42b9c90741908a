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
        List<Interval> walked = AntiEntropy.startingAtOwnPoint(intervals, "http://b:8080", MEMBERS);
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
        assertThat(MEMBERS.stream().map(member -> intervals.indexOf(AntiEntropy.startingAtOwnPoint(intervals, member, MEMBERS).get(0))))
                .containsExactly(66, 0, 33);
    }

    @Test
    void fewerIntervalsThanMembersStillWalkEveryOne() {
        assertThat(AntiEntropy.startingAtOwnPoint(intervals(1), "http://c:8080", MEMBERS)).hasSize(1);
        assertThat(AntiEntropy.startingAtOwnPoint(List.of(), "http://c:8080", MEMBERS)).isEmpty();
    }
}
