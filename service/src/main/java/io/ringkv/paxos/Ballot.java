package io.ringkv.paxos;

import java.nio.ByteBuffer;

/**
 * A Paxos ballot: a hybrid-clock reading of the coordinator that proposes, and a number drawn at
 * random by that node when it starts. Ballots order by the clock reading first, so that a later
 * proposal usually has the greater ballot without any coordination; the random part makes two
 * coordinators' ballots of the same clock reading different (a node's clock gives a reading
 * once, and after a restart the random part differs even if its clock went back).
 * Cassandra's lightweight transactions use time-based UUIDs the same way.
 *
 * @param time     the hybrid clock's reading ({@code io.ringkv.record.HybridClock})
 * @param proposer the proposing node's random number of this run
 */
public record Ballot(long time, long proposer) implements Comparable<Ballot> {

    /** Lower than every ballot a coordinator makes: nothing promised, accepted or committed. */
    public static final Ballot NONE = new Ballot(0, 0);
    static final int BYTES = 2 * Long.BYTES;

    @Override
    public int compareTo(Ballot other) {
        int byTime = Long.compare(time, other.time);
        return byTime != 0 ? byTime : Long.compare(proposer, other.proposer);
    }

    public boolean isAfter(Ballot other) {
        return compareTo(other) > 0;
    }

    void write(ByteBuffer buffer) {
        buffer.putLong(time).putLong(proposer);
    }

    static Ballot read(ByteBuffer buffer) {
        return new Ballot(buffer.getLong(), buffer.getLong());
    }

    @Override
    public String toString() {
        return Long.toHexString(time) + "." + Long.toHexString(proposer);
    }
}
