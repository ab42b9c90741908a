package io.ringkv.replication;

import io.ringkv.record.Record;


/**
 * Where the coordinator leaves a write that a peer missed (it failed, timed out or its breaker was
 * open), to be delivered to it later: hinted handoff ({@code repair.Hints}).
 */
@FunctionalInterface
public interface MissedWrites {

    /** Keeps nothing: for a node without peers, and for tests. */
    MissedWrites NONE = (replica, key, record) -> { };

    /** Keeps the write for the replica; never blocks. */
    void missed(String replica, byte[] key, Record record);
}
