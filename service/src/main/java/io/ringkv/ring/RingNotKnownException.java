package io.ringkv.ring;

/**
 * This node has not found the other members yet (DNS discovery, before its bootstrap gate): its
 * ring may be itself alone, so it cannot tell where a key lives. A request answered from that
 * ring would read a store that may have fallen behind and take writes the others never see.
 */
public final class RingNotKnownException extends RuntimeException {

    public RingNotKnownException() {
        super("this node has not found the other members of its cluster yet", null, false, false);
    }
}
