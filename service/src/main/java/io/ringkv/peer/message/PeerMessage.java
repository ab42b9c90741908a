package io.ringkv.peer.message;

import java.util.Objects;

import io.netty.buffer.ByteBuf;

/**
 * One request of the node-to-node protocol, whole: its type byte, who may send it ({@link Trust},
 * which every unit must name: nothing is served by default), and what this node does for it.
 * Its frame's layout, both ways, is in the same unit: static methods the calling side encodes
 * through ({@link PeerCall}, {@link RangeRequest}). Every unit is listed in {@link PeerMessages}.
 */
public abstract class PeerMessage {

    private final byte type;
    private final Trust trust;

    protected PeerMessage(byte type, Trust trust) {
        this.type = type;
        this.trust = Objects.requireNonNull(trust, "every peer message names who may send it");
    }

    public final byte type() {
        return type;
    }

    public final Trust trust() {
        return trust;
    }

    /**
     * Serves the request with this id, on the connection's event loop: decodes its payload and
     * answers through the exchange (at once, or from storage work it starts there).
     *
     * @param decision what the message's {@link #trust} allows this caller: never {@link Trust.Decision#REFUSE}
     */
    public abstract void serve(Exchange exchange, int id, ByteBuf payload, Trust.Decision decision);

    @Override
    public String toString() {
        return getClass().getSimpleName() + "(" + type + ")";
    }
}
