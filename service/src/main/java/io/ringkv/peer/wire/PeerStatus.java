package io.ringkv.peer.wire;

import java.util.Map;

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
 * @param attributes             its attributes as a member ({@code ring.Member}), such as its zone;
 *                               empty from a peer that has none or does not tell them (an older one)
 */
public record PeerStatus(int state, long purgedBefore, long lastRepairWithReceiver, Map<String, String> attributes) {

    /** From a peer of an older protocol, which tells nothing. */
    public static final PeerStatus UNKNOWN = new PeerStatus(-1, 0, -1);

    /** The fixed part: the state, the horizon and the last repair. */
    public static final int WIRE_BYTES = 17;
    /** What a PING answer of protocol version 2 held: the state and the horizon. */
    public static final int VERSION_2_BYTES = 9;

    public PeerStatus {
        attributes = Map.copyOf(attributes);
    }

    /** A status without attributes, as a peer that tells none sends it. */
    public PeerStatus(int state, long purgedBefore, long lastRepairWithReceiver) {
        this(state, purgedBefore, lastRepairWithReceiver, Map.of());
    }

    /** The same status with these attributes. */
    public PeerStatus withAttributes(Map<String, String> told) {
        return new PeerStatus(state, purgedBefore, lastRepairWithReceiver, told);
    }
}
