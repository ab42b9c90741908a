package io.ringkv.peer;

/**
 * What a peer's answer to PING says about it.
 *
 * @param state        its member state's code ({@code ring.MemberState} ordinal); -1 from a peer that reports none
 * @param purgedBefore the highest timestamp below which it may have purged tombstones: a node
 *                     whose last repair with it is older must not serve the data it kept
 */
public record PeerStatus(int state, long purgedBefore) {

    static final int WIRE_BYTES = 9;
}
