package io.ringkv.paxos;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Function;

import io.ringkv.record.Record;
import io.ringkv.storage.ConsensusStates;
import io.ringkv.storage.RocksStore;

/**
 * This node as a Paxos acceptor of the keys it holds: the three requests a coordinator makes of
 * a key's replicas, each a {@link PaxosState} rule applied by the store's writer, so that a
 * key's changes never interleave and each is in the write-ahead log before it is answered.
 * Blocking: called on the storage scheduler (the peer units, the local calls of a coordinator).
 */
public final class Acceptor {

    private final RocksStore store;
    private final ConsensusStates states;
    private final int maxRecordLength;

    /** @param maxRecordLength the largest record a state on disk may hold: a larger one is corrupt */
    public Acceptor(RocksStore store, int maxRecordLength) {
        this.store = store;
        this.states = new ConsensusStates(store);
        this.maxRecordLength = maxRecordLength;
    }

    /**
     * Promises the ballot unless a higher one was; answers with the state and the key's record.
     *
     * @param since the commits the coordinator wants told ({@link PaxosState#toldSince}): those at
     *              or after its first proposal, when it looks for it; null for the last only
     */
    public Promise prepare(byte[] key, Ballot ballot, Ballot since) {
        PaxosState.Prepared prepared = change(key, state -> {
            PaxosState.Prepared outcome = state.prepare(ballot);
            return new Change<>(outcome.state(), outcome);
        });
        // Read after the promise is stored: a commit stored before it wrote its record before it.
        Record current = store.get(key).orElse(null);
        return new Promise(prepared.promised(), prepared.state().toldSince(since), current);
    }

    /**
     * The key's record in this node's store if that needs no disk read (else not
     * {@link RocksStore.Lookup#known()}): never blocks. What a coordinator checks a stale
     * condition against before it starts a round ({@code Precondition#provedFalseBy}).
     */
    public RocksStore.Lookup currentIfCached(byte[] key) {
        return store.getIfCached(key);
    }

    /** Accepts the proposal unless a higher ballot was promised; answers with the ballot promised now. */
    public Ballot accept(byte[] key, Proposal proposal) {
        return change(key, state -> {
            PaxosState after = state.accept(proposal);
            return new Change<>(after, after.promised());
        });
    }

    /**
     * Stores the chosen proposal's record (as any write: unless a newer version is held), then
     * records the commit. In that order: a replica that says it has the commit has its record.
     *
     * @param record what to store, null for nothing (an empty proposal's commit)
     */
    public void commit(byte[] key, Commit commit, Record record) {
        CompletableFuture<Boolean> stored = record == null ? CompletableFuture.completedFuture(false) : store.apply(key, record);
        CompletableFuture<Commit> recorded = changeAsync(key, state -> new Change<>(state.commit(commit), commit));
        join(stored);
        join(recorded);
    }

    /** A new state and what to answer. */
    private record Change<T>(PaxosState state, T answer) {
    }

    private <T> T change(byte[] key, Function<PaxosState, Change<T>> rule) {
        return join(changeAsync(key, rule));
    }

    /**
     * Applies the rule on the writer to the stored state. A state that does not decode fails this
     * request alone, changing nothing (it must not fail the writer's batch, nor be taken for an
     * empty state: that would forget promises).
     */
    private <T> CompletableFuture<T> changeAsync(byte[] key, Function<PaxosState, Change<T>> rule) {
        var outcome = new Object() {
            Change<T> change;
            RuntimeException failure;
        };
        return states.change(key, bytes -> {
            try {
                PaxosState state = bytes == null ? PaxosState.EMPTY : PaxosState.fromBytes(bytes, maxRecordLength);
                outcome.change = rule.apply(state);
                return outcome.change.state() == state ? bytes : outcome.change.state().toBytes();
            } catch (RuntimeException e) {
                outcome.failure = e;
                return bytes;
            }
        }).thenApply(changed -> {
            if (outcome.failure != null) {
                throw outcome.failure;
            }
            return outcome.change.answer();
        });
    }

    private static <T> T join(CompletableFuture<T> future) {
        try {
            return future.join();
        } catch (CompletionException e) {
            throw e.getCause() instanceof RuntimeException runtime ? runtime : e;
        }
    }
}
