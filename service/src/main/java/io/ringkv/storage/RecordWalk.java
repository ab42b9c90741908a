package io.ringkv.storage;

import java.util.Arrays;
import java.util.function.Predicate;

import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;

import io.ringkv.record.KeyedRecord;
import io.ringkv.record.RecordCodec;

/**
 * The records of a store's two families, {@code records} and {@code expiring}, walked in step in
 * key order, optionally of the keys that pass a test only (the values of the others are never
 * copied out of RocksDB): what every scan of the records reads through ({@link RangeCursor},
 * {@link CheckpointReader}). A key is in one family at most within a snapshot. It borrows the two
 * iterators, positioned where the walk begins; their owner closes them.
 */
final class RecordWalk {

    private final RocksIterator plain;
    /** Null for a checkpoint taken before records could expire: it has no such family. */
    private final RocksIterator expiring;
    /** Null: every key. */
    private final Predicate<byte[]> keys;

    RecordWalk(RocksIterator plain, RocksIterator expiring, Predicate<byte[]> keys) {
        this.plain = plain;
        this.expiring = expiring;
        this.keys = keys;
        skipKeysLeftOut(plain);
        skipKeysLeftOut(expiring);
    }

    /** The next record in key order, or null at the end. Blocking. */
    KeyedRecord next() throws RocksDBException {
        boolean inPlain = plain.isValid();
        boolean inExpiring = expiring != null && expiring.isValid();
        if (!inPlain && !inExpiring) {
            plain.status();
            if (expiring != null) {
                expiring.status();
            }
            return null;
        }
        boolean fromPlain = inPlain && (!inExpiring || Arrays.compareUnsigned(plain.key(), expiring.key()) < 0);
        RocksIterator from = fromPlain ? plain : expiring;
        byte[] stored = from.value();
        KeyedRecord next = new KeyedRecord(from.key(), fromPlain ? RecordCodec.decode(stored) : ExpiringRows.recordOf(stored));
        from.next();
        skipKeysLeftOut(from);
        return next;
    }

    /** Moves past the keys the test leaves out, to the next key it takes (or the end). */
    private void skipKeysLeftOut(RocksIterator iterator) {
        while (iterator != null && iterator.isValid() && keys != null && !keys.test(iterator.key())) {
            iterator.next();
        }
    }
}
