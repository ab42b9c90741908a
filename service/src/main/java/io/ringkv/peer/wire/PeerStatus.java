package io.ringkv.peer.wire;

/**
 * What a node tells about itself in a PING, and the peer in its answer.
 *
 * @param state                  its member state's code ({@code ring.MemberState} ordinal); -1 from a peer that reports none
 * @param purgedBefore           the highest timestamp below which it may have purged tombstones
 * @param lastRepairWithReceiver when its last finished repair with the node it tells this to had
 *                               started (0: none, or it has forgotten that node); -1 from a peer
 *                               that does not say. Its purges wait for that repair while it knows
 *                               the node, so a horizon past it means the receiver may hold values
 *                               whose deletes the sender dropped.
 */
public record PeerStatus(int state, long purgedBefore, long lastRepairWithReceiver) {

    /** From a peer of an older protocol, which tells nothing. */
    public static final PeerStatus UNKNOWN = new PeerStatus(-1, 0, -1);

    public static final int WIRE_BYTES = 17;
    /** What a PING answer of protocol version 2 held: the state and the horizon. */
    public static final int VERSION_2_BYTES = 9;
}
