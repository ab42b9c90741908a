package io.ringkv.ring;

import java.util.Optional;

/**
 * Where a member stands in moving data. Reads ask the members that hold data now (NORMAL and
 * LEAVING); writes also go to those that will (JOINING), so that nothing written while data moves
 * is missed on either side. The ordinal is what a PING carries: new states go at the end.
 */
public enum MemberState {
    /** New, or back after too long away: it takes writes and pulls its ranges, but no read asks it yet. */
    JOINING,
    /** Holds its ranges and serves them. */
    NORMAL,
    /** Handing its ranges to their next owners before it goes; still serves reads until it has. */
    LEAVING,
    /**
     * Handed its ranges over and about to stop: neither reads nor writes go to it any more, so its
     * peers do not wait for it between its exit and their next discovery round, which takes it off
     * their rings.
     */
    LEFT;

    /** Whether reads may ask it. */
    public boolean holdsData() {
        return this == NORMAL || this == LEAVING;
    }

    /** Whether it will hold data once the moves under way are done. */
    public boolean willHoldData() {
        return this == NORMAL || this == JOINING;
    }

    /** Whether it is going away: once it stops answering it has gone, not failed. */
    public boolean departing() {
        return this == LEAVING || this == LEFT;
    }

    /** The state a PING told by its ordinal, if this version knows it (a newer peer may tell one it does not). */
    public static Optional<MemberState> told(int ordinal) {
        return ordinal >= 0 && ordinal < values().length ? Optional.of(values()[ordinal]) : Optional.empty();
    }
}
