package io.ringkv.replication;

import io.ringkv.record.Record;

/**
 * Hinted hand-off, as the coordinator sees it: a write a replica did not take (it failed, timed
 * out or its breaker was open) is left here as a hint, to be delivered to the replica later
 * ({@code hints.Hints}).
 */
@FunctionalInterface
public interface HintedHandoff {

    /** Keeps nothing: for a node without peers, and for tests. */
    HintedHandoff NONE = (replica, key, record) -> { };

    /** Keeps the write as a hint for the replica; never blocks. */
    void hint(String replica, byte[] key, Record record);
}
