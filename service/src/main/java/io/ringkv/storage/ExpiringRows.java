package io.ringkv.storage;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;

import io.ringkv.record.Record;
import io.ringkv.record.RecordCodec;
import io.ringkv.record.RecordCodec.MalformedRecordException;

/**
 * How a record that expires is stored: as a row in the format of RocksDB's Cassandra utilities,
 * the one format a compaction filter shipped with RocksJava ({@code CassandraCompactionFilter})
 * reads, so that compaction drops an expired value without a scan:
 *
 * <pre>
 *   int32   local deletion time: Integer.MAX_VALUE (a live row)
 *   int64   marked for delete at: Long.MIN_VALUE (a live row)
 *   column 0, expiring:  int8 mask 2, int8 index 0, int64 expiry (microseconds), int32 length,
 *                        the record (format 2), int32 time to live after the expiry: 0 seconds
 *   column 1, permanent: int8 mask 0, int8 index 1, int64 expiry (milliseconds), int32 length,
 *                        the record's tombstone (same timestamp)
 * </pre>
 *
 * All big-endian. The filter, purging on expiration, drops column 0 once its expiry is past by
 * the node's clock and leaves column 1: the tombstone of the record, which hides older versions
 * as the expired value did, until the purge of tombstones removes it when repair allows (so no
 * replica that missed the write can bring an older version back). Readers never rely on the
 * filter having run: an expired value is absent to them at once ({@link Record#liveAt}). The
 * expiry stays in column 1, where the filter leaves it: the tombstone index entry of the row is
 * found by it ({@link BatchCommit}).
 */
final class ExpiringRows {

    /** What a row holds: the record (the value, or its tombstone once compaction dropped the value) and its expiry. */
    record Row(Record record, long expiresAt) {
    }

    private static final int LIVE_ROW_DELETION_TIME = Integer.MAX_VALUE;
    private static final long LIVE_ROW_MARKED_FOR_DELETE_AT = Long.MIN_VALUE;
    private static final byte EXPIRING_MASK = 2;
    private static final byte PERMANENT_MASK = 0;
    private static final int ROW_HEADER = Integer.BYTES + Long.BYTES;
    /** mask, index, timestamp, length. */
    private static final int COLUMN_HEADER = 2 + Long.BYTES + Integer.BYTES;

    private ExpiringRows() {
    }

    /** The row for a record that expires. */
    static byte[] of(Record record) {
        if (record.expiresAt() == Record.NEVER) {
            throw new IllegalArgumentException("a record that does not expire is stored as it is: " + record);
        }
        byte[] value = record.encoded();
        byte[] tombstone = Record.tombstone(record.timestamp()).encoded();
        return ByteBuffer.allocate(ROW_HEADER + COLUMN_HEADER + value.length + Integer.BYTES + COLUMN_HEADER + tombstone.length)
                .putInt(LIVE_ROW_DELETION_TIME).putLong(LIVE_ROW_MARKED_FOR_DELETE_AT)
                .put(EXPIRING_MASK).put((byte) 0).putLong(TimeUnit.MILLISECONDS.toMicros(record.expiresAt()))
                .putInt(value.length).put(value).putInt(0)
                .put(PERMANENT_MASK).put((byte) 1).putLong(record.expiresAt()).putInt(tombstone.length).put(tombstone)
                .array();
    }

    /**
     * What a row holds.
     *
     * @throws MalformedRecordException when the bytes are not such a row
     */
    static Row read(byte[] row) {
        try {
            ByteBuffer buffer = ByteBuffer.wrap(row);
            if (buffer.getInt() != LIVE_ROW_DELETION_TIME || buffer.getLong() != LIVE_ROW_MARKED_FOR_DELETE_AT) {
                throw new MalformedRecordException("an expiring row that is not live");
            }
            Record value = null;
            if (buffer.hasRemaining() && buffer.get(buffer.position()) == EXPIRING_MASK) {
                value = RecordCodec.decode(column(buffer, EXPIRING_MASK, 0));
                buffer.getInt(); // the time to live after the expiry
            }
            int tombstoneColumn = buffer.position();
            Record tombstone = RecordCodec.decode(column(buffer, PERMANENT_MASK, 1));
            long expiresAt = buffer.getLong(tombstoneColumn + 2);
            if (buffer.hasRemaining() || !tombstone.tombstone() || expiresAt <= 0
                    || value != null && (value.timestamp() != tombstone.timestamp() || value.expiresAt() != expiresAt)) {
                throw new MalformedRecordException("an expiring row whose last column is not its tombstone");
            }
            return new Row(value != null ? value : tombstone, expiresAt);
        } catch (BufferUnderflowException e) {
            throw new MalformedRecordException("an expiring row cut short (" + row.length + " bytes)");
        }
    }

    /** The record a row holds: the expiring value, or its tombstone once compaction dropped the value. */
    static Record recordOf(byte[] row) {
        return read(row).record();
    }

    /** The bytes of the column at the buffer's position, which must be the one of that mask and index. */
    private static byte[] column(ByteBuffer buffer, byte mask, int index) {
        if (buffer.get() != mask || buffer.get() != index) {
            throw new MalformedRecordException("an expiring row without its column " + index);
        }
        buffer.getLong();
        int length = buffer.getInt();
        if (length < 0 || length > buffer.remaining()) {
            throw new MalformedRecordException("an expiring row's column of " + length + " bytes in " + buffer.capacity());
        }
        byte[] bytes = new byte[length];
        buffer.get(bytes);
        return bytes;
    }
}
