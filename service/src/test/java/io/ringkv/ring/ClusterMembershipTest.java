package io.ringkv.ring;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

class ClusterMembershipTest {

    private final ClusterMembership membership = ClusterMembership.fixed("a", List.of("a", "b", "c"), 16);

    @Test
    void aJoiningMemberTakesWritesButNoReadsUntilItIsNormal() {
        membership.setState("c", MemberState.JOINING);
        var view = membership.view();
        assertThat(view.current().members()).containsExactly("a", "b");
        assertThat(view.future().members()).containsExactlyInAnyOrder("a", "b", "c");

        assertThat(view.joining()).containsOnlyKeys("c");

        membership.setState("c", MemberState.NORMAL);
        assertThat(membership.view().current()).isSameAs(membership.view().ring());
        assertThat(membership.view().joining()).isEmpty();
    }

    @Test
    void membersJoiningTogetherEachGetTheRingOfThemAloneWithTheCurrentOnes() {
        var five = ClusterMembership.fixed("a", List.of("a", "b", "c", "d", "e"), 16);
        five.setState("d", MemberState.JOINING);
        five.setState("e", MemberState.JOINING);
        var view = five.view();
        assertThat(view.current().members()).containsExactlyInAnyOrder("a", "b", "c");
        assertThat(view.joining().get("d").members()).containsExactlyInAnyOrder("a", "b", "c", "d");
        assertThat(view.joining().get("e").members()).containsExactlyInAnyOrder("a", "b", "c", "e");
        assertThat(view.future().members()).hasSize(5);
    }

    @Test
    void aLeavingMemberServesReadsButIsLeftOutOfTheFuture() {
        membership.setState("b", MemberState.LEAVING);
        var view = membership.view();
        assertThat(view.current().members()).containsExactlyInAnyOrder("a", "b", "c");
        assertThat(view.future().members()).containsExactly("a", "c");
    }

    @Test
    void aMemberThatLeftTheRingForgetsItsState() {
        membership.setState("b", MemberState.LEAVING);
        membership.update(Set.of("a", "c"));
        assertThat(membership.state("b")).isEqualTo(MemberState.NORMAL);
        membership.update(Set.of("a", "b", "c"));
        assertThat(membership.view().future().members()).as("back, with no state left over").contains("b");
    }

    @Test
    void aMemberNotHeardFromIsPresumedToHoldDataOnlyIfItDid() {
        var intended = ClusterMembership.discovered("a", 16, member -> member.equals("b"));
        intended.update(Set.of("a", "b", "c"));
        assertThat(intended.state("b")).as("held data when this node last knew").isEqualTo(MemberState.NORMAL);
        assertThat(intended.state("c")).as("never heard of: a new pod").isEqualTo(MemberState.JOINING);
        assertThat(intended.view().current().members()).containsExactlyInAnyOrder("a", "b");
        assertThat(intended.view().joining()).containsOnlyKeys("c");

        intended.setState("c", MemberState.NORMAL);
        assertThat(intended.view().current().members()).as("it told its state").containsExactlyInAnyOrder("a", "b", "c");
    }
}
