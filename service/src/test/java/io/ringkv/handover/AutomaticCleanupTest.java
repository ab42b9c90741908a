package io.ringkv.handover;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.function.BooleanSupplier;

import org.junit.jupiter.api.Test;

import io.ringkv.handover.AutomaticCleanup.Observation;
import io.ringkv.handover.AutomaticCleanup.Steady;
import io.ringkv.ring.ClusterMembership;
import io.ringkv.ring.Member;
import io.ringkv.ring.MemberState;

/**
 * When a node starts a cleanup by itself: only once its ring has stayed unchanged for the settle
 * time, and only when that is safe and useful.
 */
class AutomaticCleanupTest {

    private static final Duration SETTLE = Duration.ofMinutes(10);
    private static final long T0 = 1_000_000;
    private static final BooleanSupplier SOMETHING_TO_DROP = () -> true;

    private final ClusterMembership membership = ClusterMembership.fixed(Member.named("http://a"), Member.named(List.of("http://a", "http://b", "http://c")), 16);
    private final ClusterMembership.View view = membership.view();

    @Test
    void startsOnceTheViewHasStayedUnchangedForTheSettleTime() {
        Steady steady = new Steady(view, T0);
        assertThat(AutomaticCleanup.shouldStart(SETTLE, settled(steady, T0 + SETTLE.toMillis() - 1), SOMETHING_TO_DROP))
                .as("a millisecond early").isFalse();
        assertThat(AutomaticCleanup.shouldStart(SETTLE, settled(steady.after(view, T0 + 5), T0 + SETTLE.toMillis()), SOMETHING_TO_DROP))
                .as("the same view seen again keeps its clock").isTrue();
    }

    @Test
    void aChangedViewStartsTheClockAgain() {
        long changed = T0 + SETTLE.toMillis() - 1000;
        membership.setState("http://b", MemberState.LEAVING);
        membership.setState("http://b", MemberState.NORMAL);
        Steady steady = new Steady(view, T0).after(membership.view(), changed);
        assertThat(steady.sinceMillis()).isEqualTo(changed);
        assertThat(AutomaticCleanup.shouldStart(SETTLE, settled(steady, T0 + SETTLE.toMillis()), SOMETHING_TO_DROP))
                .as("a member's state changed and changed back: a new view, not yet settled").isFalse();
        assertThat(AutomaticCleanup.shouldStart(SETTLE, settled(steady, changed + SETTLE.toMillis()), SOMETHING_TO_DROP)).isTrue();
    }

    @Test
    void notAgainOnAViewItIsDoneOn() {
        Cleanup.Status done = ended("done", T0 + 1000);
        var seen = new Observation(T0 + 3 * SETTLE.toMillis(), new Steady(view, T0), true, MemberState.NORMAL, done, true);
        assertThat(AutomaticCleanup.shouldStart(SETTLE, seen, SOMETHING_TO_DROP)).isFalse();
    }

    @Test
    void oneThatFailedIsTriedAgainASettleTimeAfterItEnded() {
        long failedAt = T0 + SETTLE.toMillis() + 5000;
        Cleanup.Status failed = ended("failed", failedAt);
        var early = new Observation(failedAt + SETTLE.toMillis() - 1, new Steady(view, T0), true, MemberState.NORMAL, failed, false);
        var late = new Observation(failedAt + SETTLE.toMillis(), new Steady(view, T0), true, MemberState.NORMAL, failed, false);
        assertThat(AutomaticCleanup.shouldStart(SETTLE, early, SOMETHING_TO_DROP)).isFalse();
        assertThat(AutomaticCleanup.shouldStart(SETTLE, late, SOMETHING_TO_DROP)).isTrue();
    }

    @Test
    void notWhileOneRuns() {
        var running = new Cleanup.Status("running", Cleanup.REQUEST, 0, 0, 0, Instant.ofEpochMilli(T0), null, null);
        var seen = new Observation(T0 + SETTLE.toMillis(), new Steady(view, T0), true, MemberState.NORMAL, running, false);
        assertThat(AutomaticCleanup.shouldStart(SETTLE, seen, SOMETHING_TO_DROP)).isFalse();
    }

    @Test
    void notWhenThereIsNothingToDrop() {
        assertThat(AutomaticCleanup.shouldStart(SETTLE, settled(new Steady(view, T0), T0 + SETTLE.toMillis()), () -> false)).isFalse();
    }

    @Test
    void whatThereIsToDropIsNotLookedUpBeforeTheViewHasSettled() {
        BooleanSupplier mustNotBeAsked = () -> {
            throw new AssertionError("looked up what there is to drop on a view that has not settled");
        };
        assertThat(AutomaticCleanup.shouldStart(SETTLE, settled(new Steady(view, T0), T0 + 1000), mustNotBeAsked)).isFalse();
    }

    @Test
    void notUnlessThisNodeIsNormalOnAKnownRing() {
        Steady steady = new Steady(view, T0);
        long now = T0 + SETTLE.toMillis();
        var joining = new Observation(now, steady, true, MemberState.JOINING, Cleanup.Status.NEVER, false);
        var leaving = new Observation(now, steady, true, MemberState.LEAVING, Cleanup.Status.NEVER, false);
        var unknown = new Observation(now, steady, false, MemberState.NORMAL, Cleanup.Status.NEVER, false);
        assertThat(AutomaticCleanup.shouldStart(SETTLE, joining, SOMETHING_TO_DROP)).as("joining").isFalse();
        assertThat(AutomaticCleanup.shouldStart(SETTLE, leaving, SOMETHING_TO_DROP)).as("leaving").isFalse();
        assertThat(AutomaticCleanup.shouldStart(SETTLE, unknown, SOMETHING_TO_DROP)).as("ring not known yet").isFalse();
    }

    @Test
    void notWhileAMemberJoinsHoweverLongItTakes() {
        membership.update(Member.named(Set.of("http://a", "http://b", "http://c", "http://d")));
        membership.setState("http://d", MemberState.JOINING);
        var seen = settled(new Steady(membership.view(), T0), T0 + 10 * SETTLE.toMillis());
        assertThat(AutomaticCleanup.shouldStart(SETTLE, seen, SOMETHING_TO_DROP)).isFalse();
    }

    @Test
    void neverWhenTheSettleTimeIsZero() {
        var seen = settled(new Steady(view, T0), T0 + 10 * SETTLE.toMillis());
        assertThat(AutomaticCleanup.shouldStart(Duration.ZERO, seen, SOMETHING_TO_DROP)).isFalse();
    }

    /** This node NORMAL on a known ring, and no cleanup before. */
    private static Observation settled(Steady steady, long nowMillis) {
        return new Observation(nowMillis, steady, true, MemberState.NORMAL, Cleanup.Status.NEVER, false);
    }

    private static Cleanup.Status ended(String state, long endedMillis) {
        return new Cleanup.Status(state, Cleanup.AUTOMATIC, 0, 10, 5, Instant.ofEpochMilli(T0), Instant.ofEpochMilli(endedMillis), null);
    }
}
