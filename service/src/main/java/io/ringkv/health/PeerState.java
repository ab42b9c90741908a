package io.ringkv.health;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;

/** How this node sees a member of the ring. */
public enum PeerState {
    /** Calls succeed (or none has failed yet). */
    UP,
    /** Recently failing, or its breaker is letting probe calls through: it may be on its way down or back up. */
    SUSPECT,
    /** Its breaker is open: no calls are sent, and it counts as a failed replica at once. */
    DOWN;

    /** The state from the breaker and the outcome of the latest call; pure, so it is tested directly. */
    public static PeerState of(CircuitBreaker.State breaker, boolean lastCallFailed) {
        return switch (breaker) {
            case OPEN, FORCED_OPEN -> DOWN;
            case HALF_OPEN -> SUSPECT;
            default -> lastCallFailed ? SUSPECT : UP;
        };
    }
}
