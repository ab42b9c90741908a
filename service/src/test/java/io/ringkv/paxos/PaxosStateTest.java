package io.ringkv.paxos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import org.junit.jupiter.api.Test;

import io.ringkv.record.Record;

/** The acceptor's rules and the state's binary form, directly. */
class PaxosStateTest {

    private static final int MAX_RECORD = 1 << 16;

    private static Ballot ballot(long time) {
        return new Ballot(time, 7);
    }

    private static Record value(long timestamp, String value) {
        return Record.value(timestamp, value.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void promisesOnlyAHigherBallot() {
        PaxosState.Prepared first = PaxosState.EMPTY.prepare(ballot(10));
        assertThat(first.promised()).isTrue();
        assertThat(first.state().promised()).isEqualTo(ballot(10));

        PaxosState.Prepared same = first.state().prepare(ballot(10));
        assertThat(same.promised()).as("the same ballot twice").isFalse();
        PaxosState.Prepared lower = first.state().prepare(ballot(9));
        assertThat(lower.promised()).isFalse();
        assertThat(lower.state()).isSameAs(first.state());
        assertThat(first.state().prepare(new Ballot(10, 8)).promised()).as("the random part breaks a tie").isTrue();
    }

    @Test
    void acceptsAtOrAboveThePromiseOnly() {
        PaxosState promised = PaxosState.EMPTY.prepare(ballot(10)).state();
        Proposal below = Proposal.of(ballot(9), value(9, "old"));
        assertThat(promised.accept(below)).isSameAs(promised);
        assertThat(promised.accept(below).accepts(below)).isFalse();

        Proposal at = Proposal.of(ballot(10), value(10, "new"));
        PaxosState accepted = promised.accept(at);
        assertThat(accepted.accepts(at)).isTrue();
        assertThat(accepted.accepted()).isEqualTo(at);

        Proposal above = Proposal.of(ballot(12), value(12, "newer"));
        assertThat(accepted.accept(above).promised()).as("an accept raises the promise").isEqualTo(ballot(12));
    }

    @Test
    void aCommitEndsTheRoundItDecides() {
        Proposal chosen = Proposal.of(ballot(10), value(10, "v"));
        PaxosState accepted = PaxosState.EMPTY.prepare(ballot(10)).state().accept(chosen);
        PaxosState committed = accepted.commit(chosen.commit());
        assertThat(committed.accepted()).as("no longer in progress, its value dropped").isNull();
        assertThat(committed.lastCommit()).isEqualTo(chosen.commit());
        assertThat(committed.commit(chosen.commit())).as("the same commit twice").isSameAs(committed);

        PaxosState later = PaxosState.EMPTY.prepare(ballot(20)).state().accept(Proposal.of(ballot(20), value(20, "w")));
        assertThat(later.commit(chosen.commit()).accepted()).as("an older commit leaves a newer proposal in progress").isNotNull();
    }

    @Test
    void keepsTheLatestCommitsInOrderAndSaysWhatItForgot() {
        PaxosState state = PaxosState.EMPTY;
        for (long time = 1; time <= PaxosState.RECENT_COMMITS + 4; time++) {
            // Out of order: every even ballot arrives after the next odd one.
            long arriving = time % 2 == 1 ? time + 1 : time - 1;
            state = state.commit(new Commit(ballot(arriving), ballot(arriving)));
        }
        assertThat(state.recent()).hasSize(PaxosState.RECENT_COMMITS);
        assertThat(state.recent()).isSortedAccordingTo((a, b) -> a.ballot().compareTo(b.ballot()));
        assertThat(state.lastCommit().ballot()).isEqualTo(ballot(PaxosState.RECENT_COMMITS + 4));
        assertThat(state.floor()).isEqualTo(ballot(4));
        assertThat(state.commit(new Commit(ballot(3), ballot(3)))).as("older than what it forgot").isSameAs(state);
    }

    @Test
    void itsBinaryFormRoundTripsAndRefusesWhatIsNotOne() {
        PaxosState state = PaxosState.EMPTY.prepare(ballot(30)).state()
                .commit(new Commit(ballot(5), ballot(4)))
                .accept(Proposal.of(ballot(30), value(30, "in progress")));
        assertThat(PaxosState.fromBytes(state.toBytes(), MAX_RECORD)).isEqualTo(state);
        PaxosState empty = PaxosState.EMPTY.prepare(ballot(1)).state().accept(Proposal.empty(ballot(1)));
        assertThat(PaxosState.fromBytes(empty.toBytes(), MAX_RECORD)).isEqualTo(empty);

        byte[] bytes = state.toBytes();
        assertThatThrownBy(() -> PaxosState.fromBytes(Arrays.copyOf(bytes, bytes.length - 1), MAX_RECORD))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("cut short");
        assertThatThrownBy(() -> PaxosState.fromBytes(Arrays.copyOf(bytes, bytes.length + 1), MAX_RECORD))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("after the end");
        byte[] wrongFormat = bytes.clone();
        wrongFormat[0] = 9;
        assertThatThrownBy(() -> PaxosState.fromBytes(wrongFormat, MAX_RECORD)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> PaxosState.fromBytes(bytes, 4)).as("a record larger than allowed")
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aPromiseRoundTripsWithTheRecordItCarries() {
        Promise promise = new Promise(true, PaxosState.EMPTY.prepare(ballot(3)).state(), value(2, "current"));
        assertThat(Promise.fromBytes(promise.toBytes(), MAX_RECORD)).isEqualTo(promise);
        Promise refused = new Promise(false, PaxosState.EMPTY, null);
        assertThat(Promise.fromBytes(refused.toBytes(), MAX_RECORD)).isEqualTo(refused);
        Proposal proposal = Proposal.of(ballot(4), Record.tombstone(4)).reproposedUnder(ballot(6));
        assertThat(Proposal.fromBytes(proposal.toBytes(), MAX_RECORD)).isEqualTo(proposal);
        assertThat(proposal.origin()).isEqualTo(ballot(4));
    }
}
