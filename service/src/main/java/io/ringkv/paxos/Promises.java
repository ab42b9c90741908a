package io.ringkv.paxos;

import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.stream.IntStream;

import io.ringkv.record.LastWriteWins;
import io.ringkv.record.Record;

/**
 * What a coordinator concludes from the promises of a quorum of a key's replicas, before it
 * proposes anything. Plain Java.
 *
 * <p>Every quorum shares a replica with every other, so among these promises is at least one
 * replica that accepted any proposal that was chosen (it may not be committed yet), and one that
 * holds the last commit every quorum was brought up to ({@link #behind}).
 */
public final class Promises {

    private final List<Promise> promises;
    private final Commit latestCommit;

    public Promises(List<Promise> promises) {
        this.promises = List.copyOf(promises);
        this.latestCommit = promises.stream().map(promise -> promise.state().lastCommit())
                .max((a, b) -> a.ballot().compareTo(b.ballot())).orElse(Commit.NONE);
    }

    public Commit latestCommit() {
        return latestCommit;
    }

    /**
     * The proposal accepted under the highest ballot, if that ballot is after the latest commit
     * and the proposal writes something: it may have been chosen, so a coordinator must complete
     * it before it proposes its own (Paxos' rule that a new ballot carries the value of the
     * highest accepted one). An empty proposal changes nothing and needs no completing.
     */
    public Optional<Proposal> inProgress() {
        return promises.stream().map(promise -> promise.state().accepted())
                .filter(accepted -> accepted != null)
                .max((a, b) -> a.ballot().compareTo(b.ballot()))
                .filter(accepted -> accepted.ballot().isAfter(latestCommit.ballot()) && !accepted.isEmpty());
    }

    /**
     * The positions of the promises whose replica has not got the latest commit. A coordinator
     * brings them up to it before it builds on it: a commit is then held by a quorum before any
     * round after it ends, which is what lets a coordinator find its own in {@link #committed}.
     */
    public List<Integer> behind() {
        return IntStream.range(0, promises.size())
                .filter(i -> latestCommit.ballot().isAfter(promises.get(i).state().lastCommit().ballot()))
                .boxed().toList();
    }

    /** The key's newest record among these replicas (tombstones included): what a condition is checked against. */
    public Optional<Record> current() {
        return LastWriteWins.newest(promises.stream().map(Promise::currentIfAny).toList());
    }

    /** Which of these origins a commit came from, as far as these replicas remember; empty if none. */
    public Optional<Ballot> committedOf(Collection<Ballot> origins) {
        return promises.stream().flatMap(promise -> promise.state().recent().stream())
                .map(Commit::origin).filter(origins::contains).findFirst();
    }

    /**
     * Whether these replicas remember every commit after the ballot: only then does a commit not
     * found by {@link #committed} mean that there was none.
     */
    public boolean rememberAllAfter(Ballot ballot) {
        return promises.stream().allMatch(promise -> ballot.isAfter(promise.state().floor()));
    }
}
