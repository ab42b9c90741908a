package io.ringkv.replication;

import io.ringkv.record.HybridClock;

/** A timestamp from another node further ahead of this node's clock than ringkv.clock.max-offset allows. */
public final class ClockSkewException extends IllegalArgumentException {

    public ClockSkewException(long timestamp) {
        super("timestamp " + timestamp + " (" + HybridClock.physicalMillisOf(timestamp)
                + " ms) is further ahead of this node's clock than ringkv.clock.max-offset allows");
    }
}
