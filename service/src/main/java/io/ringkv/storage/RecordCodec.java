package io.ringkv.storage;

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
 * be read beside this one without rewriting the data.
 */
public final class RecordCodec {

    public static final int HEADER_SIZE = 10;

    private static final byte FORMAT_V1 = 1;
    private static final byte FLAG_TOMBSTONE = 1;

    private RecordCodec() {
    }

    public static byte[] encode(Record record) {
        byte[] value = record.value();
        return ByteBuffer.allocate(HEADER_SIZE + value.length)
                .put(FORMAT_V1)
                .put(record.tombstone() ? FLAG_TOMBSTONE : 0)
                .putLong(record.timestamp())
                .put(value)
                .array();
    }

    /** @throws MalformedRecordException when the bytes are not a record of a known format */
    public static Record decode(byte[] bytes) {
        if (bytes.length < HEADER_SIZE) {
            throw new MalformedRecordException("record of " + bytes.length + " bytes is shorter than its header");
        }
        if (bytes[0] != FORMAT_V1) {
            throw new MalformedRecordException("unknown record format " + bytes[0]);
        }
        ByteBuffer buffer = ByteBuffer.wrap(bytes);
        boolean tombstone = (bytes[1] & FLAG_TOMBSTONE) != 0;
        long timestamp = buffer.getLong(2);
        if (tombstone) {
            if (bytes.length != HEADER_SIZE) {
                throw new MalformedRecordException("tombstone with a value");
            }
            return Record.tombstone(timestamp);
        }
        byte[] value = new byte[bytes.length - HEADER_SIZE];
        buffer.get(HEADER_SIZE, value);
        return Record.value(timestamp, value);
    }

    public static final class MalformedRecordException extends IllegalArgumentException {
        public MalformedRecordException(String message) {
            super(message);
        }
    }
}
