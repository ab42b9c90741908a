package io.ringkv.record;

import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * One version of a key: a value or a tombstone, stamped by the coordinator's hybrid logical clock.
 * Replicas keep only the newest version they have seen (see {@link LastWriteWins}).
 *
 * <p>A record is its binary form ({@link RecordCodec}), the one it has on disk and on the wire,
 * and its value is a part of it: a record read from a peer's frame is stored, and one read from
 * the store is sent, without being decoded into a value and encoded again. A replica being filled
 * by repair receives records at megabytes a second; each copy more was garbage the collector
 * paused the node for.
 */
public final class Record {

    private final long timestamp;
    private final boolean tombstone;
    /** The binary form; never modified once the record is made. */
    private final byte[] encoded;

    Record(long timestamp, boolean tombstone, byte[] encoded) {
        this.timestamp = timestamp;
        this.tombstone = tombstone;
        this.encoded = encoded;
    }

    public static Record value(long timestamp, byte[] value) {
        return new Record(timestamp, false, RecordCodec.encode(timestamp, false, value));
    }

    public static Record tombstone(long timestamp) {
        return new Record(timestamp, true, RecordCodec.encode(timestamp, true, new byte[0]));
    }

    public long timestamp() {
        return timestamp;
    }

    public boolean tombstone() {
        return tombstone;
    }

    /** The value's length in bytes; 0 for a tombstone. */
    public int valueLength() {
        return encoded.length - RecordCodec.HEADER_SIZE;
    }

    /** A copy of the value; empty for a tombstone. */
    public byte[] value() {
        return Arrays.copyOfRange(encoded, RecordCodec.HEADER_SIZE, encoded.length);
    }

    /** The value, read-only and without a copy. */
    public ByteBuffer valueBuffer() {
        return ByteBuffer.wrap(encoded, RecordCodec.HEADER_SIZE, valueLength()).slice().asReadOnlyBuffer();
    }

    /**
     * The binary form, as stored and sent. Shared, not copied: callers only read it (write it to
     * the store or into a frame).
     */
    public byte[] encoded() {
        return encoded;
    }

    /** Compares the values in unsigned byte order, without copying them. */
    public int compareValues(Record other) {
        return Arrays.compareUnsigned(encoded, RecordCodec.HEADER_SIZE, encoded.length,
                other.encoded, RecordCodec.HEADER_SIZE, other.encoded.length);
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof Record that && Arrays.equals(encoded, that.encoded);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(encoded);
    }

    @Override
    public String toString() {
        return tombstone ? "Tombstone@" + timestamp : "Value@" + timestamp + "[" + valueLength() + " bytes]";
    }
}
