package io.ringkv.paxos;

import java.nio.ByteBuffer;

/**
 * A chosen proposal as a replica remembers it once committed: its ballot, which orders the key's
 * rounds, and its origin, which proposal it was ({@link Proposal#origin()}).
 */
public record Commit(Ballot ballot, Ballot origin) {

    /** Before the key's first commit. */
    public static final Commit NONE = new Commit(Ballot.NONE, Ballot.NONE);
    static final int BYTES = 2 * Ballot.BYTES;

    void write(ByteBuffer buffer) {
        ballot.write(buffer);
        origin.write(buffer);
    }

    static Commit read(ByteBuffer buffer) {
        return new Commit(Ballot.read(buffer), Ballot.read(buffer));
    }
}
