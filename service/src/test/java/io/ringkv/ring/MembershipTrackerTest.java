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
        assertThat(tracker.observe(Set.of(B, C), Set.of(B, C), Set.of(), null)).contains(Set.of(SELF, B, C));
        assertThat(tracker.observe(Set.of(B, C), Set.of(B, C), Set.of(), null)).as("no change, no new ring").isEmpty();
    }

    @Test
    void aListedNameThatDoesNotAnswerDoesNotJoin() {
        assertThat(tracker.observe(Set.of(), Set.of(B), Set.of(), null)).isEmpty();
        assertThat(tracker.members()).containsExactly(SELF);
    }

    @Test
    void aMemberThatIsListedButDownStays() {
        tracker.observe(Set.of(B), Set.of(B), Set.of(), null);
        for (int round = 0; round < 10; round++) {
            assertThat(tracker.observe(Set.of(), Set.of(B), Set.of(), null)).isEmpty();
        }
        assertThat(tracker.members()).contains(B);
    }

    @Test
    void aMemberLeavesOnlyAfterBeingAbsentForSeveralRoundsInARow() {
        tracker.observe(Set.of(B, C), Set.of(B, C), Set.of(), null);
        assertThat(tracker.observe(Set.of(B), Set.of(B), Set.of(), null)).isEmpty();
        assertThat(tracker.observe(Set.of(B), Set.of(B), Set.of(), null)).isEmpty();
        // Back for one round: the count starts again.
        assertThat(tracker.observe(Set.of(B), Set.of(B, C), Set.of(), null)).isEmpty();
        assertThat(tracker.observe(Set.of(B), Set.of(B), Set.of(), null)).isEmpty();
        assertThat(tracker.observe(Set.of(B), Set.of(B), Set.of(), null)).isEmpty();
        assertThat(tracker.observe(Set.of(B), Set.of(B), Set.of(), null)).isEqualTo(Optional.of(Set.of(SELF, B)));
    }

    @Test
    void neverRemovesItself() {
        for (int round = 0; round < 5; round++) {
            tracker.observe(Set.of(), Set.of(), Set.of(), null);
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
        tracker.observe(Set.of(B, C), Set.of(B, C), Set.of(), null);
        assertThat(tracker.observe(Set.of(B), Set.of(B, C), Set.of(C), null))
                .as("no damping: it handed its data over and went").contains(Set.of(SELF, B));
        assertThat(tracker.observe(Set.of(B, C), Set.of(B, C), Set.of(C), null))
                .as("one that answers again is back, whatever it said before").contains(Set.of(SELF, B, C));
    }

    private static final String D = "http://d:8080";

    @Test
    void intendedMembersAreOnTheRingFromTheStartAndStayWhileDownOrUnlisted() {
        Set<String> intended = Set.of(SELF, B, C);
        assertThat(tracker.observe(Set.of(), Set.of(), Set.of(), intended))
                .as("on the ring before any answered").contains(Set.of(SELF, B, C));
        for (int round = 0; round < 10; round++) {
            assertThat(tracker.observe(Set.of(B), Set.of(B), Set.of(), intended))
                    .as("C down, Pending and unlisted for round " + round + ": it keeps its place").isEmpty();
        }
        assertThat(tracker.observe(Set.of(B), Set.of(B), Set.of(C), intended))
                .as("even one that once said LEAVING, while it is meant to be a member").isEmpty();
        assertThat(tracker.members()).containsExactlyInAnyOrder(SELF, B, C);
    }

    @Test
    void aNameBeyondTheIntentDoesNotJoin() {
        assertThat(tracker.observe(Set.of(B, D), Set.of(B, D), Set.of(), Set.of(SELF, B))).contains(Set.of(SELF, B));
        assertThat(tracker.members()).doesNotContain(D);
    }

    @Test
    void aScaleDownTakesAMemberOffOnlyOnceItHandedItsDataOverOrIsGone() {
        tracker.observe(Set.of(B, C), Set.of(B, C), Set.of(), Set.of(SELF, B, C));
        Set<String> scaledDown = Set.of(SELF, B);
        assertThat(tracker.observe(Set.of(B, C), Set.of(B, C), Set.of(), scaledDown))
                .as("C still answers: it is handing its data over").isEmpty();
        assertThat(tracker.observe(Set.of(B), Set.of(B, C), Set.of(C), scaledDown))
                .as("it said LEAVING and stopped answering: gone").contains(Set.of(SELF, B));
        assertThat(tracker.observe(Set.of(B, C), Set.of(B, C), Set.of(), scaledDown))
                .as("beyond the intent, it does not come back").isEmpty();
    }

    @Test
    void aMemberScaledAwayThatCrashedLeavesAfterTheDamping() {
        tracker.observe(Set.of(B, C), Set.of(B, C), Set.of(), Set.of(SELF, B, C));
        Set<String> scaledDown = Set.of(SELF, B);
        assertThat(tracker.observe(Set.of(B), Set.of(B), Set.of(), scaledDown)).isEmpty();
        assertThat(tracker.observe(Set.of(B), Set.of(B), Set.of(), scaledDown)).isEmpty();
        assertThat(tracker.observe(Set.of(B), Set.of(B), Set.of(), scaledDown)).contains(Set.of(SELF, B));
    }
}
