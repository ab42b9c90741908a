package io.ringkv.paxos;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * What one replica knows of one key's consensus, and the acceptor's three rules over it, as in
 * Lamport's Paxos made repeatable per key the way Cassandra's lightweight transactions do it: each
 * commit ends one round of single-decree Paxos, and the next starts from it. Plain Java: the
 * {@link Acceptor} stores it between requests.
 *
 * @param promised the highest ballot promised: no proposal under a lower one is accepted
 * @param accepted the last proposal accepted, while it is newer than the last commit (it may have
 *                 been chosen, and a coordinator that sees it completes it); null otherwise
 * @param recent   the latest commits, oldest first, at most {@value #RECENT_COMMITS}: what a
 *                 coordinator that lost track of its own proposal looks for
 * @param floor    commits at or below this ballot may be missing from {@code recent} (dropped
 *                 as older ones were added); {@link Ballot#NONE} while none was dropped
 */
public record PaxosState(Ballot promised, Proposal accepted, List<Commit> recent, Ballot floor) {

    /**
     * Enough for a coordinator to find its commit behind those of every other client retrying on
     * a key as hot as a shared counter; 2 KiB of state at most.
     */
    static final int RECENT_COMMITS = 64;

    public static final PaxosState EMPTY = new PaxosState(Ballot.NONE, null, List.of(), Ballot.NONE);

    public PaxosState {
        recent = List.copyOf(recent);
    }

    public Commit lastCommit() {
        return recent.isEmpty() ? Commit.NONE : recent.get(recent.size() - 1);
    }

    /**
     * The state as a promise tells it: the recent commits at or after {@code since} and the last
     * one (all a coordinator looking for its own needs), or only the last for {@code since} null.
     */
    public PaxosState toldSince(Ballot since) {
        Commit last = lastCommit();
        List<Commit> told = recent.stream()
                .filter(commit -> commit == last || (since != null && !since.isAfter(commit.ballot())))
                .toList();
        return told.size() == recent.size() ? this : new PaxosState(promised, accepted, told, floor);
    }

    /** The answer to a prepare under {@code ballot}, and the state after it. */
    public record Prepared(PaxosState state, boolean promised) {
    }

    /** Promises the ballot if it is higher than every one promised so far. */
    public Prepared prepare(Ballot ballot) {
        if (!ballot.isAfter(promised)) {
            return new Prepared(this, false);
        }
        return new Prepared(new PaxosState(ballot, accepted, recent, floor), true);
    }

    /** Accepts the proposal unless a higher ballot was promised; the state after (unchanged if refused). */
    public PaxosState accept(Proposal proposal) {
        if (promised.isAfter(proposal.ballot())) {
            return this;
        }
        return new PaxosState(proposal.ballot(), proposal, recent, floor);
    }

    /** Whether {@link #accept} took the proposal: the state promises exactly its ballot. */
    public boolean accepts(Proposal proposal) {
        return promised.equals(proposal.ballot());
    }

    /**
     * Records a commit, in ballot order among the recent ones (commits may arrive out of order: a
     * coordinator completing an older round, a late one); the accepted proposal it decides no
     * longer counts as in progress and is dropped, with its value, which the store now holds.
     */
    public PaxosState commit(Commit commit) {
        if (!commit.ballot().isAfter(floor) || recent.stream().anyMatch(known -> known.ballot().equals(commit.ballot()))) {
            return this;
        }
        List<Commit> commits = new ArrayList<>(recent.size() + 1);
        int at = 0;
        while (at < recent.size() && commit.ballot().isAfter(recent.get(at).ballot())) {
            at++;
        }
        commits.addAll(recent.subList(0, at));
        commits.add(commit);
        commits.addAll(recent.subList(at, recent.size()));
        Ballot newFloor = floor;
        while (commits.size() > RECENT_COMMITS) {
            newFloor = commits.remove(0).ballot();
        }
        Ballot last = commits.get(commits.size() - 1).ballot();
        Proposal stillInProgress = accepted != null && accepted.ballot().isAfter(last) ? accepted : null;
        return new PaxosState(promised, stillInProgress, commits, newFloor);
    }

    // ---- the binary form, in the store's paxos family ------------------------------------------

    public byte[] toBytes() {
        ByteBuffer buffer = ByteBuffer.allocate(1 + encodedSize()).put(Codec.FORMAT_V1);
        write(buffer);
        return buffer.array();
    }

    int encodedSize() {
        return Ballot.BYTES + 1 + (accepted == null ? 0 : accepted.encodedSize()) + 1 + recent.size() * Commit.BYTES + Ballot.BYTES;
    }

    void write(ByteBuffer buffer) {
        promised.write(buffer);
        buffer.put((byte) (accepted == null ? 0 : 1));
        if (accepted != null) {
            accepted.write(buffer);
        }
        buffer.put((byte) recent.size());
        recent.forEach(commit -> commit.write(buffer));
        floor.write(buffer);
    }

    /** @throws IllegalArgumentException when the bytes are not a state of a known format */
    public static PaxosState fromBytes(byte[] bytes, int maxRecordLength) {
        return Codec.decode(bytes, "a paxos state", buffer -> read(buffer, maxRecordLength));
    }

    static PaxosState read(ByteBuffer buffer, int maxRecordLength) {
        Ballot promised = Ballot.read(buffer);
        Proposal accepted = Codec.flag(buffer) ? Proposal.read(buffer, maxRecordLength) : null;
        int count = Byte.toUnsignedInt(buffer.get());
        if (count > RECENT_COMMITS) {
            throw new Codec.MalformedStateException(count + " recent commits (at most " + RECENT_COMMITS + ")");
        }
        List<Commit> recent = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            recent.add(Commit.read(buffer));
        }
        return new PaxosState(promised, accepted, recent, Ballot.read(buffer));
    }
}
