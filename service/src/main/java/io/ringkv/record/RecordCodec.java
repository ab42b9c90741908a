package io.ringkv.record;

import java.nio.ByteBuffer;

/**
 * The one binary form of a {@link Record}, used both on disk and on the node-to-node wire, so a
 * replica stores what it receives without re-encoding it:
 *
 * <pre>
 *   format 1 (a value that never expires, or a tombstone)
 *   byte 0      format (1)
 *   byte 1      flags: bit 0 = tombstone
 *   bytes 2-9   timestamp, big-endian hybrid logical clock value
 *   bytes 10-   the value (empty for a tombstone)
 *
 *   format 2 (a value that expires)
 *   byte 0      format (2)
 *   byte 1      flags: none
 *   bytes 2-9   timestamp, as format 1
 *   bytes 10-17 expiry time, big-endian wall-clock milliseconds since the epoch, positive
 *   bytes 18-   the value
 * </pre>
 *
 * Both share their first ten bytes, so a record's version (timestamp, tombstone or not) reads the
 * same from either. A value without expiry keeps format 1 byte for byte: plain records cost
 * nothing more, and stores written before expiry existed are read as they are. A node that
 * knows only format 1 refuses a format 2 record as malformed rather than misreading it.
 * A record's binary form is {@link Record#encoded()}.
 */
public final class RecordCodec {

    // The layout, defined here only: the e2e checker's copy (e2e/checker/wire.py) is checked
    // against these by RecordLayoutTest.
    static final int FORMAT_OFFSET = 0;
    static final int FLAGS_OFFSET = 1;
    static final int TIMESTAMP_OFFSET = 2;
    /** The bytes before a format 1 value: a tombstone is only these, and every record has them. */
    public static final int HEADER_SIZE = TIMESTAMP_OFFSET + Long.BYTES;
    static final int EXPIRY_OFFSET = HEADER_SIZE;
    /** The bytes before a format 2 value: the most any record has before its value. */
    public static final int MAX_HEADER_SIZE = EXPIRY_OFFSET + Long.BYTES;

    static final byte FORMAT_V1 = 1;
    /** The form of a value that expires: the first a replica must read to keep one. */
    public static final byte FORMAT_EXPIRING = 2;
    /** The newest form this node reads, which it tells its peers ({@code ring.Member#RECORD_FORMAT}). */
    public static final int NEWEST_FORMAT = FORMAT_EXPIRING;
    static final byte FLAG_TOMBSTONE = 1;

    private RecordCodec() {
    }

    static Record encode(long timestamp, boolean tombstone, long expiresAt, byte[] value) {
        boolean expiring = expiresAt != Record.NEVER;
        int header = expiring ? MAX_HEADER_SIZE : HEADER_SIZE;
        ByteBuffer encoded = ByteBuffer.allocate(header + value.length)
                .put(FORMAT_OFFSET, expiring ? FORMAT_EXPIRING : FORMAT_V1)
                .put(FLAGS_OFFSET, tombstone ? FLAG_TOMBSTONE : 0)
                .putLong(TIMESTAMP_OFFSET, timestamp)
                .put(header, value);
        if (expiring) {
            encoded.putLong(EXPIRY_OFFSET, expiresAt);
        }
        return new Record(timestamp, tombstone, expiresAt, encoded.array(), header);
    }

    /**
     * The record whose binary form {@code bytes} are. The record keeps the array, without a copy:
     * the caller must not change it afterwards.
     *
     * @throws MalformedRecordException when the bytes are not a record of a known format
     */
    public static Record decode(byte[] bytes) {
        boolean tombstone = isTombstone(bytes, bytes.length);
        ByteBuffer buffer = ByteBuffer.wrap(bytes);
        if (bytes[FORMAT_OFFSET] == FORMAT_V1) {
            return new Record(buffer.getLong(TIMESTAMP_OFFSET), tombstone, Record.NEVER, bytes, HEADER_SIZE);
        }
        long expiresAt = buffer.getLong(EXPIRY_OFFSET);
        if (expiresAt <= 0) {
            throw new MalformedRecordException("expiry time " + expiresAt + " is not positive");
        }
        return new Record(buffer.getLong(TIMESTAMP_OFFSET), false, expiresAt, bytes, MAX_HEADER_SIZE);
    }

    /**
     * The version (timestamp and kind) of the record whose first {@code header.length} bytes
     * (at least {@link #HEADER_SIZE}) are {@code header}, of {@code length} bytes in all, as a
     * record without its value or expiry: for deciding between versions without reading the value.
     *
     * @throws MalformedRecordException when the bytes are not a record of a known format
     */
    public static Record decodeVersion(byte[] header, int length) {
        boolean tombstone = isTombstone(header, length);
        long timestamp = ByteBuffer.wrap(header).getLong(TIMESTAMP_OFFSET);
        return tombstone ? Record.tombstone(timestamp) : Record.value(timestamp, new byte[0]);
    }

    /** Checks the header of a record of {@code length} bytes in all; whether the record is a tombstone. */
    private static boolean isTombstone(byte[] header, int length) {
        if (length < HEADER_SIZE) {
            throw new MalformedRecordException("record of " + length + " bytes is shorter than its header");
        }
        byte format = header[FORMAT_OFFSET];
        boolean tombstone = (header[FLAGS_OFFSET] & FLAG_TOMBSTONE) != 0;
        if (format == FORMAT_V1) {
            if (tombstone && length != HEADER_SIZE) {
                throw new MalformedRecordException("tombstone with a value");
            }
        } else if (format == FORMAT_EXPIRING) {
            if (length < MAX_HEADER_SIZE) {
                throw new MalformedRecordException("expiring record of " + length + " bytes is shorter than its header");
            }
            if (tombstone) {
                throw new MalformedRecordException("expiring tombstone");
            }
        } else {
            throw new MalformedRecordException("unknown record format " + format);
        }
        if ((header[FLAGS_OFFSET] & ~FLAG_TOMBSTONE) != 0) {
            throw new MalformedRecordException("unknown record flags " + header[FLAGS_OFFSET]);
        }
        return tombstone;
    }

    public static final class MalformedRecordException extends IllegalArgumentException {
        public MalformedRecordException(String message) {
            super(message);
        }
    }
}
