package io.ringkv.record;

import java.nio.ByteBuffer;

/**
 * The one binary form of a {@link Record}, used both on disk and on the node-to-node wire, so a
 * replica stores what it receives without re-encoding it:
 *
 * <pre>
 *   byte 0      format version (1)
 *   byte 1      flags: bit 0 = tombstone
 *   bytes 2-9   timestamp, big-endian hybrid logical clock value
 *   bytes 10-   the value (empty for a tombstone)
 * </pre>
 *
 * The version byte lets a later format (for example one carrying a Merkle-tree hint or a TTL)
 * be read beside this one without rewriting the data. A record's binary form is
 * {@link Record#encoded()}.
 */
public final class RecordCodec {

    // The layout, defined here only: the e2e checker's copy (e2e/checker/wire.py) is checked
    // against these by RecordLayoutTest.
    static final int FORMAT_OFFSET = 0;
    static final int FLAGS_OFFSET = 1;
    static final int TIMESTAMP_OFFSET = 2;
    /** The bytes before the value: a tombstone is only these. */
    public static final int HEADER_SIZE = TIMESTAMP_OFFSET + Long.BYTES;

    static final byte FORMAT_V1 = 1;
    static final byte FLAG_TOMBSTONE = 1;

    private RecordCodec() {
    }

    static byte[] encode(long timestamp, boolean tombstone, byte[] value) {
        return ByteBuffer.allocate(HEADER_SIZE + value.length)
                .put(FORMAT_OFFSET, FORMAT_V1)
                .put(FLAGS_OFFSET, tombstone ? FLAG_TOMBSTONE : 0)
                .putLong(TIMESTAMP_OFFSET, timestamp)
                .put(HEADER_SIZE, value)
                .array();
    }

    /**
     * The record whose binary form {@code bytes} are. The record keeps the array, without a copy:
     * the caller must not change it afterwards.
     *
     * @throws MalformedRecordException when the bytes are not a record of a known format
     */
    public static Record decode(byte[] bytes) {
        boolean tombstone = isTombstone(bytes, bytes.length);
        return new Record(timestamp(bytes), tombstone, bytes);
    }

    /**
     * The version (timestamp and kind) of the record whose first {@code header.length} bytes are
     * {@code header}, of {@code length} bytes in all, as a record without its value: for deciding
     * between versions without reading the value.
     *
     * @throws MalformedRecordException when the bytes are not a record of a known format
     */
    public static Record decodeVersion(byte[] header, int length) {
        boolean tombstone = isTombstone(header, length);
        long timestamp = timestamp(header);
        return tombstone ? Record.tombstone(timestamp) : Record.value(timestamp, new byte[0]);
    }

    /** Checks the header of a record of {@code length} bytes in all; whether the record is a tombstone. */
    private static boolean isTombstone(byte[] header, int length) {
        if (length < HEADER_SIZE) {
            throw new MalformedRecordException("record of " + length + " bytes is shorter than its header");
        }
        if (header[FORMAT_OFFSET] != FORMAT_V1) {
            throw new MalformedRecordException("unknown record format " + header[FORMAT_OFFSET]);
        }
        boolean tombstone = (header[FLAGS_OFFSET] & FLAG_TOMBSTONE) != 0;
        if (tombstone && length != HEADER_SIZE) {
            throw new MalformedRecordException("tombstone with a value");
        }
        return tombstone;
    }

    private static long timestamp(byte[] header) {
        return ByteBuffer.wrap(header).getLong(TIMESTAMP_OFFSET);
    }

    public static final class MalformedRecordException extends IllegalArgumentException {
        public MalformedRecordException(String message) {
            super(message);
        }
    }
}
