package io.ringkv.paxos;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

import io.ringkv.record.Record;

/** What a coordinator concludes from a quorum's promises. */
class PromisesTest {

    private static Ballot ballot(long time) {
        return new Ballot(time, 1);
    }

    private static Record value(long timestamp, String value) {
        return Record.value(timestamp, value.getBytes(StandardCharsets.UTF_8));
    }

    private static PaxosState committed(long... ballots) {
        PaxosState state = PaxosState.EMPTY;
        for (long time : ballots) {
            state = state.commit(new Commit(ballot(time), ballot(time)));
        }
        return state;
    }

    private static Promise promise(PaxosState state, Record current) {
        return new Promise(true, state, current);
    }

    @Test
    void theHighestAcceptedProposalAfterTheLatestCommitIsInProgress() {
        Proposal older = Proposal.of(ballot(12), value(12, "a"));
        Proposal newer = Proposal.of(ballot(14), value(14, "b"));
        Promises promises = new Promises(List.of(
                promise(committed(10).accept(older), null),
                promise(committed(10, 11).accept(newer), null),
                promise(committed(10), null)));
        assertThat(promises.latestCommit().ballot()).isEqualTo(ballot(11));
        assertThat(promises.inProgress()).contains(newer);
    }

    @Test
    void nothingIsInProgressOnceCommittedOrWhenTheHighestIsEmpty() {
        Proposal chosen = Proposal.of(ballot(12), value(12, "a"));
        Promises committedElsewhere = new Promises(List.of(
                promise(committed(10).accept(chosen), null),
                promise(committed(10, 12), null)));
        assertThat(committedElsewhere.inProgress()).isEmpty();

        Promises closedByAnEmptyProposal = new Promises(List.of(
                promise(committed(10).accept(chosen), null),
                promise(committed(10).accept(Proposal.empty(ballot(13))), null)));
        assertThat(closedByAnEmptyProposal.inProgress()).as("a higher empty proposal closed it").isEmpty();
    }

    @Test
    void findsTheReplicasBehindTheLatestCommitAndTheNewestRecord() {
        Promises promises = new Promises(List.of(
                promise(committed(10), value(10, "old")),
                promise(committed(10, 12), value(12, "new")),
                promise(PaxosState.EMPTY, Record.tombstone(11))));
        assertThat(promises.behind()).containsExactly(0, 2);
        assertThat(promises.current()).contains(value(12, "new"));
        assertThat(new Promises(List.of(promise(PaxosState.EMPTY, null))).current()).isEmpty();
    }

    @Test
    void findsACommitOfItsOwnOnlyWhileItIsRemembered() {
        Ballot mine = ballot(5);
        PaxosState withMine = committed(3).commit(new Commit(ballot(8), mine));
        Promises promises = new Promises(List.of(promise(withMine, null), promise(committed(3), null)));
        assertThat(promises.committedOf(Set.of(mine))).contains(mine);
        assertThat(promises.committedOf(Set.of(ballot(6)))).isEmpty();
        assertThat(promises.rememberAllAfter(mine)).isTrue();

        long[] many = new long[PaxosState.RECENT_COMMITS + 2];
        for (int i = 0; i < many.length; i++) {
            many[i] = 10 + i;
        }
        Promises forgetful = new Promises(List.of(promise(committed(many), null)));
        assertThat(forgetful.rememberAllAfter(ballot(10))).as("commits after it were dropped").isFalse();
        assertThat(forgetful.rememberAllAfter(ballot(12))).isTrue();
    }
}
