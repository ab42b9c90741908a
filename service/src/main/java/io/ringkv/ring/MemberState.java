package io.ringkv.ring;

/**
 * Where a member stands in moving data. Reads ask the members that hold data now (NORMAL and
 * LEAVING); writes also go to those that will (JOINING), so that nothing written while data moves
 * is missed on either side.
 */
public enum MemberState {
    /** New, or back after too long away: it takes writes and pulls its ranges, but no read asks it yet. */
    JOINING,
    /** Holds its ranges and serves them. */
    NORMAL,
    /** Handing its ranges to their next owners before it goes; still serves reads until it has. */
    LEAVING;

    /** Whether reads may ask it. */
    public boolean holdsData() {
        return this != JOINING;
    }

    /** Whether it will hold data once the moves under way are done. */
    public boolean willHoldData() {
        return this != LEAVING;
    }
}
