package io.ringkv.record;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Arrays;

/**
 * One version of a key: a value or a tombstone, stamped by the coordinator's hybrid logical clock.
 * Replicas keep only the newest version they have seen (see {@link LastWriteWins}). A value may
 * expire: from its expiry time on (wall-clock milliseconds, set by the coordinator that took the
 * write) it is absent to readers, as a tombstone of the same timestamp would be, and it still
 * hides every older version.
 *
 * <p>A record is its binary form ({@link RecordCodec}), the one it has on disk and on the wire,
 * and its value is a part of it: a record read from a peer's frame is stored, and one read from
 * the store is sent, without being decoded into a value and encoded again. A replica being filled
 * by repair receives records at megabytes a second; each copy more was garbage the collector
 * paused the node for.
 */
public final class Record {

    /** The {@link #expiresAt()} of a record that never expires. */
    public static final long NEVER = 0;

    private final long timestamp;
    private final boolean tombstone;
    private final long expiresAt;
    /** The binary form; never modified once the record is made. */
    private final byte[] encoded;
    /** Where the value begins in {@link #encoded}: after the header, whose size depends on its format. */
    private final int valueOffset;

    Record(long timestamp, boolean tombstone, long expiresAt, byte[] encoded, int valueOffset) {
        this.timestamp = timestamp;
        this.tombstone = tombstone;
        this.expiresAt = expiresAt;
        this.encoded = encoded;
        this.valueOffset = valueOffset;
    }

    public static Record value(long timestamp, byte[] value) {
        return RecordCodec.encode(timestamp, false, NEVER, value);
    }

    /** A value absent to readers from {@code expiresAt} (wall-clock milliseconds since the epoch, positive) on. */
    public static Record expiring(long timestamp, byte[] value, long expiresAt) {
        if (expiresAt <= 0) {
            throw new IllegalArgumentException("an expiry time must be positive: " + expiresAt);
        }
        return RecordCodec.encode(timestamp, false, expiresAt, value);
    }

    /**
     * A value that lives for {@code ttl} from its timestamp's physical time: the coordinator that
     * stamps it decides its expiry time, which every replica then keeps as it is.
     */
    public static Record expiringAfter(long timestamp, byte[] value, Duration ttl) {
        return expiring(timestamp, value, HybridClock.physicalMillisOf(timestamp) + ttl.toMillis());
    }

    public static Record tombstone(long timestamp) {
        return RecordCodec.encode(timestamp, true, NEVER, new byte[0]);
    }

    public long timestamp() {
        return timestamp;
    }

    public boolean tombstone() {
        return tombstone;
    }

    /** When the value expires, in wall-clock milliseconds since the epoch; {@link #NEVER} for one that does not (and a tombstone). */
    public long expiresAt() {
        return expiresAt;
    }

    /** Whether a reader at {@code nowMillis} (wall clock) sees a value: not a tombstone, and not expired by then. */
    public boolean liveAt(long nowMillis) {
        return !tombstone && (expiresAt == NEVER || nowMillis < expiresAt);
    }

    /** The value's length in bytes; 0 for a tombstone. */
    public int valueLength() {
        return encoded.length - valueOffset;
    }

    /** A copy of the value; empty for a tombstone. */
    public byte[] value() {
        return Arrays.copyOfRange(encoded, valueOffset, encoded.length);
    }

    /** The value, read-only and without a copy. */
    public ByteBuffer valueBuffer() {
        return ByteBuffer.wrap(encoded, valueOffset, valueLength()).slice().asReadOnlyBuffer();
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
        return Arrays.compareUnsigned(encoded, valueOffset, encoded.length, other.encoded, other.valueOffset, other.encoded.length);
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
        return tombstone ? "Tombstone@" + timestamp
                : "Value@" + timestamp + "[" + valueLength() + " bytes" + (expiresAt == NEVER ? "" : ", expires at " + expiresAt) + "]";
    }
}
