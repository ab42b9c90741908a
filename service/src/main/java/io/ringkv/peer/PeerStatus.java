package io.ringkv.peer;

/**
 * What a node tells about itself in a PING, and the peer in its answer.
 *
 * @param state        its member state's code ({@code ring.MemberState} ordinal); -1 from a peer that reports none
 * @param purgedBefore the highest timestamp below which it may have purged tombstones: a node
 *                     whose last repair with it started earlier may hold values whose deletes it dropped
 */
public record PeerStatus(int state, long purgedBefore) {

    /** From a peer of an older protocol, which tells nothing. */
    public static final PeerStatus UNKNOWN = new PeerStatus(-1, 0);

    static final int WIRE_BYTES = 9;
}
