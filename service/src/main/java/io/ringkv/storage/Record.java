package io.ringkv.storage;

import java.util.Arrays;

/**
 * One version of a key: a value or a tombstone, stamped by the coordinator's hybrid logical clock.
 * Replicas keep only the newest version they have seen (see {@link io.ringkv.replication.LastWriteWins}).
 */
public record Record(long timestamp, boolean tombstone, byte[] value) {

    private static final byte[] NO_VALUE = new byte[0];

    public Record {
        if (tombstone && value.length != 0) {
            throw new IllegalArgumentException("a tombstone carries no value");
        }
    }

    public static Record value(long timestamp, byte[] value) {
        return new Record(timestamp, false, value);
    }

    public static Record tombstone(long timestamp) {
        return new Record(timestamp, true, NO_VALUE);
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof Record that
                && timestamp == that.timestamp
                && tombstone == that.tombstone
                && Arrays.equals(value, that.value);
    }

    @Override
    public int hashCode() {
        return 31 * Long.hashCode(timestamp) + Arrays.hashCode(value) + (tombstone ? 1 : 0);
    }

    @Override
    public String toString() {
        return tombstone ? "Tombstone@" + timestamp : "Value@" + timestamp + "[" + value.length + " bytes]";
    }
}
