package io.ringkv.ring;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Optional;
import java.util.Set;

import org.junit.jupiter.api.Test;

class MembershipTrackerTest {

    private static final String SELF = "http://a:8080";
    private static final String B = "http://b:8080";
    private static final String C = "http://c:8080";

    private final MembershipTracker tracker = new MembershipTracker(SELF, 3);

    @Test
    void startsWithItselfAndAddsNamesThatAnswered() {
        assertThat(tracker.members()).containsExactly(SELF);
        assertThat(tracker.observe(Set.of(B, C), Set.of(B, C), Set.of())).contains(Set.of(SELF, B, C));
        assertThat(tracker.observe(Set.of(B, C), Set.of(B, C), Set.of())).as("no change, no new ring").isEmpty();
    }

    @Test
    void aListedNameThatDoesNotAnswerDoesNotJoin() {
        assertThat(tracker.observe(Set.of(), Set.of(B), Set.of())).isEmpty();
        assertThat(tracker.members()).containsExactly(SELF);
    }

    @Test
    void aMemberThatIsListedButDownStays() {
        tracker.observe(Set.of(B), Set.of(B), Set.of());
        for (int round = 0; round < 10; round++) {
            assertThat(tracker.observe(Set.of(), Set.of(B), Set.of())).isEmpty();
        }
        assertThat(tracker.members()).contains(B);
    }

    @Test
    void aMemberLeavesOnlyAfterBeingAbsentForSeveralRoundsInARow() {
        tracker.observe(Set.of(B, C), Set.of(B, C), Set.of());
        assertThat(tracker.observe(Set.of(B), Set.of(B), Set.of())).isEmpty();
        assertThat(tracker.observe(Set.of(B), Set.of(B), Set.of())).isEmpty();
        // Back for one round: the count starts again.
        assertThat(tracker.observe(Set.of(B), Set.of(B, C), Set.of())).isEmpty();
        assertThat(tracker.observe(Set.of(B), Set.of(B), Set.of())).isEmpty();
        assertThat(tracker.observe(Set.of(B), Set.of(B), Set.of())).isEmpty();
        assertThat(tracker.observe(Set.of(B), Set.of(B), Set.of())).isEqualTo(Optional.of(Set.of(SELF, B)));
    }

    @Test
    void neverRemovesItself() {
        for (int round = 0; round < 5; round++) {
            tracker.observe(Set.of(), Set.of(), Set.of());
        }
        assertThat(tracker.members()).containsExactly(SELF);
    }

    @org.junit.jupiter.params.ParameterizedTest(name = "{0} others listed, {1} answered: {2}")
    @org.junit.jupiter.params.provider.CsvSource({
            "0,0,true",   // DNS lists this node alone: a genuine single node
            "1,0,false",  // one other listed, not reached: not a ring of one
            "1,1,true",
            "2,0,false",
            "2,1,true",   // two of three: a majority
            "4,1,false",
            "4,2,true",   // three of five
            "5,2,false",  // three of six is no majority
            "5,5,true"})
    void theBootstrapGateOpensOnceEveryOtherOrAMajorityWasReached(int listedOthers, int answered, boolean open) {
        assertThat(MembershipTracker.reachedEnough(listedOthers, answered)).isEqualTo(open);
    }

    @Test
    void aMemberThatSaidItWasLeavingGoesAsSoonAsItStopsAnswering() {
        MembershipTracker tracker = new MembershipTracker(SELF, 3);
        tracker.observe(Set.of(B, C), Set.of(B, C), Set.of());
        assertThat(tracker.observe(Set.of(B), Set.of(B, C), Set.of(C)))
                .as("no damping: it handed its data over and went").contains(Set.of(SELF, B));
        assertThat(tracker.observe(Set.of(B, C), Set.of(B, C), Set.of(C)))
                .as("one that answers again is back, whatever it said before").contains(Set.of(SELF, B, C));
    }
}
