package io.ringkv.discovery;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Optional;
import java.util.Set;

import org.junit.jupiter.api.Test;

import io.ringkv.ring.Member;

class MembershipTrackerTest {

    private static final String SELF = "http://a:8080";
    private static final String B = "http://b:8080";
    private static final String C = "http://c:8080";

    private final MembershipTracker tracker = new MembershipTracker(Member.named(SELF), 3);

    /** Members as they answer before they tell anything about themselves: by their names alone. */
    private static Set<Member> named(String... names) {
        return Set.copyOf(Member.named(List.of(names)));
    }

    private static List<String> names(MembershipTracker tracker) {
        return tracker.members().stream().map(Member::name).toList();
    }

    @Test
    void startsWithItselfAndAddsNamesThatAnswered() {
        assertThat(names(tracker)).containsExactly(SELF);
        assertThat(tracker.observe(named(B, C), Set.of(B, C), Set.of(), null)).contains(named(SELF, B, C));
        assertThat(tracker.observe(named(B, C), Set.of(B, C), Set.of(), null)).as("no change, no new ring").isEmpty();
    }

    @Test
    void aListedNameThatDoesNotAnswerDoesNotJoin() {
        assertThat(tracker.observe(named(), Set.of(B), Set.of(), null)).isEmpty();
        assertThat(names(tracker)).containsExactly(SELF);
    }

    @Test
    void aMemberThatIsListedButDownStays() {
        tracker.observe(named(B), Set.of(B), Set.of(), null);
        for (int round = 0; round < 10; round++) {
            assertThat(tracker.observe(named(), Set.of(B), Set.of(), null)).isEmpty();
        }
        assertThat(names(tracker)).contains(B);
    }

    @Test
    void aMemberLeavesOnlyAfterBeingAbsentForSeveralRoundsInARow() {
        tracker.observe(named(B, C), Set.of(B, C), Set.of(), null);
        assertThat(tracker.observe(named(B), Set.of(B), Set.of(), null)).isEmpty();
        assertThat(tracker.observe(named(B), Set.of(B), Set.of(), null)).isEmpty();
        // Back for one round: the count starts again.
        assertThat(tracker.observe(named(B), Set.of(B, C), Set.of(), null)).isEmpty();
        assertThat(tracker.observe(named(B), Set.of(B), Set.of(), null)).isEmpty();
        assertThat(tracker.observe(named(B), Set.of(B), Set.of(), null)).isEmpty();
        assertThat(tracker.observe(named(B), Set.of(B), Set.of(), null)).isEqualTo(Optional.of(named(SELF, B)));
    }

    @Test
    void neverRemovesItself() {
        for (int round = 0; round < 5; round++) {
            tracker.observe(named(), Set.of(), Set.of(), null);
        }
        assertThat(names(tracker)).containsExactly(SELF);
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
        MembershipTracker tracker = new MembershipTracker(Member.named(SELF), 3);
        tracker.observe(named(B, C), Set.of(B, C), Set.of(), null);
        assertThat(tracker.observe(named(B), Set.of(B, C), Set.of(C), null))
                .as("no damping: it handed its data over and went").contains(named(SELF, B));
        assertThat(tracker.observe(named(B, C), Set.of(B, C), Set.of(C), null))
                .as("one that answers again is back, whatever it said before").contains(named(SELF, B, C));
    }

    private static final String D = "http://d:8080";

    @Test
    void intendedMembersAreOnTheRingFromTheStartAndStayWhileDownOrUnlisted() {
        Set<String> intended = Set.of(SELF, B, C);
        assertThat(tracker.observe(named(), Set.of(), Set.of(), intended))
                .as("on the ring before any answered").contains(named(SELF, B, C));
        for (int round = 0; round < 10; round++) {
            assertThat(tracker.observe(named(B), Set.of(B), Set.of(), intended))
                    .as("C down, Pending and unlisted for round " + round + ": it keeps its place").isEmpty();
        }
        assertThat(tracker.observe(named(B), Set.of(B), Set.of(C), intended))
                .as("even one that once said LEAVING, while it is meant to be a member").isEmpty();
        assertThat(names(tracker)).containsExactlyInAnyOrder(SELF, B, C);
    }

    @Test
    void aNameBeyondTheIntentDoesNotJoin() {
        assertThat(tracker.observe(named(B, D), Set.of(B, D), Set.of(), Set.of(SELF, B))).contains(named(SELF, B));
        assertThat(names(tracker)).doesNotContain(D);
    }

    @Test
    void aScaleDownTakesAMemberOffOnlyOnceItHandedItsDataOverOrIsGone() {
        tracker.observe(named(B, C), Set.of(B, C), Set.of(), Set.of(SELF, B, C));
        Set<String> scaledDown = Set.of(SELF, B);
        assertThat(tracker.observe(named(B, C), Set.of(B, C), Set.of(), scaledDown))
                .as("C still answers: it is handing its data over").isEmpty();
        assertThat(tracker.observe(named(B), Set.of(B, C), Set.of(C), scaledDown))
                .as("it said LEAVING and stopped answering: gone").contains(named(SELF, B));
        assertThat(tracker.observe(named(B, C), Set.of(B, C), Set.of(), scaledDown))
                .as("beyond the intent, it does not come back").isEmpty();
    }

    @Test
    void aMemberScaledAwayThatCrashedLeavesAfterTheDamping() {
        tracker.observe(named(B, C), Set.of(B, C), Set.of(), Set.of(SELF, B, C));
        Set<String> scaledDown = Set.of(SELF, B);
        assertThat(tracker.observe(named(B), Set.of(B), Set.of(), scaledDown)).isEmpty();
        assertThat(tracker.observe(named(B), Set.of(B), Set.of(), scaledDown)).isEmpty();
        assertThat(tracker.observe(named(B), Set.of(B), Set.of(), scaledDown)).contains(named(SELF, B));
    }

    /** A member is as it last told itself: a zone it tells is a change of the members, as a new name is. */
    @Test
    void whatAMemberTellsOfItselfIsAChange() {
        tracker.observe(named(B), Set.of(B), Set.of(), null);
        Member zoned = Member.inZone(B, "zone-b");
        assertThat(tracker.observe(Set.of(zoned), Set.of(B), Set.of(), null)).contains(Set.of(Member.named(SELF), zoned));
        assertThat(tracker.observe(Set.of(zoned), Set.of(B), Set.of(), null)).as("told again: no change").isEmpty();
    }
}
