package io.ringkv.testing.linearizability;

/** How an operation ended, as the client saw it. */
public enum Result {
    /** It took effect: a read that returned, or a write whose condition held. */
    OK,
    /** A conditional write whose condition did not hold (HTTP 412): nothing changed. */
    FAILED,
    /**
     * Indeterminate (a timeout, a 5xx, a dropped connection): a write may have taken effect at any
     * moment after its call, or never; a read told nothing and is left out of the check.
     */
    UNKNOWN
}
