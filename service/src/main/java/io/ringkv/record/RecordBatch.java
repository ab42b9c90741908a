package io.ringkv.record;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/**
 * Records moved together (by repair, a join or a leave): the records found for the first
 * {@code covered} of the keys asked. Moving many small records per call costs per batch rather
 * than per key (one frame, one storage-thread hop, one throttle reservation); the bound in bytes
 * keeps a batch of large values from filling the heap. Plain Java, tested directly.
 *
 * @param covered how many of the keys asked, from the first, this batch answers; the caller asks
 *                again for the rest
 * @param found   the records of those keys that exist, tombstones included, in the order asked
 */
public record RecordBatch(int covered, List<KeyedRecord> found) {

    /**
     * The bytes a batch holds at most, unless one record alone is larger: enough small records that
     * a batch costs per batch, small enough that it never holds a connection long.
     */
    public static final int MAX_BYTES = 256 * 1024;
    /** The most keys one batch is asked for. */
    public static final int MAX_KEYS = 1024;

    /** The bytes a record takes in a batch, as it goes on the wire: key length and key, record length and record. */
    public static int entrySize(KeyedRecord keyed) {
        return 2 + keyed.key().length + 4 + keyed.record().encoded().length;
    }

    /** The bytes the records take in a batch, as they go on the wire: what transfers are throttled by. */
    public static long entrySizes(List<KeyedRecord> records) {
        long bytes = 0;
        for (KeyedRecord keyed : records) {
            bytes += entrySize(keyed);
        }
        return bytes;
    }

    /**
     * Reads the keys' records from the first until the next one found would take the batch past
     * {@link #MAX_BYTES} (the first found always goes in): the batch covers the keys read.
     */
    public static RecordBatch read(List<byte[]> keys, Function<byte[], Optional<Record>> reader) {
        List<KeyedRecord> found = new ArrayList<>();
        long bytes = 0;
        int covered = 0;
        for (byte[] key : keys) {
            Optional<Record> record = reader.apply(key);
            if (record.isPresent()) {
                KeyedRecord keyed = new KeyedRecord(key, record.get());
                int entry = entrySize(keyed);
                if (!found.isEmpty() && bytes + entry > MAX_BYTES) {
                    break;
                }
                found.add(keyed);
                bytes += entry;
            }
            covered++;
        }
        return new RecordBatch(covered, found);
    }

    /** The value bytes of the records found: what they hold in memory. */
    public long valueBytes() {
        return valueBytes(found);
    }

    /** The value bytes of the records: what they hold in memory, which the byte bounds count. */
    public static long valueBytes(List<KeyedRecord> records) {
        long bytes = 0;
        for (KeyedRecord keyed : records) {
            bytes += keyed.record().valueLength();
        }
        return bytes;
    }
}
