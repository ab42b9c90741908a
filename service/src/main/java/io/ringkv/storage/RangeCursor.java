package io.ringkv.storage;

import java.util.function.Predicate;

import org.rocksdb.ReadOptions;
import org.rocksdb.RocksIterator;
import org.rocksdb.Slice;
import org.rocksdb.Snapshot;

import io.ringkv.record.KeyedRecord;
import io.ringkv.record.RecordCodec;

/**
 * A forward scan over one snapshot of the records ({@link RocksStore#openRange}), optionally of
 * the keys that pass a test only: the values of the others are never copied out of RocksDB. It
 * borrows the store's handle; the store releases the cursors still open when it closes, before
 * the database.
 */
public final class RangeCursor implements RecordCursor {

    private final RocksStore store;
    private final Snapshot snapshot;
    private final Slice upperBound;
    private final ReadOptions readOptions;
    private final RocksIterator iterator;
    /** Null: every key. */
    private final Predicate<byte[]> keys;
    private boolean released;

    RangeCursor(RocksStore store, byte[] start, byte[] end, Predicate<byte[]> keys) {
        this.store = store;
        this.keys = keys;
        snapshot = store.db().getSnapshot();
        upperBound = end == null ? null : new Slice(end);
        readOptions = new ReadOptions().setSnapshot(snapshot)
                // A scan reads each block once: keep it from evicting the point reads' working set.
                .setFillCache(false);
        if (upperBound != null) {
            readOptions.setIterateUpperBound(upperBound);
        }
        iterator = store.db().newIterator(store.families().records(), readOptions);
        iterator.seek(start);
    }

    @Override
    public KeyedRecord next() {
        return store.guarded(() -> {
            if (released) {
                throw new StorageException("the range cursor is closed");
            }
            byte[] key = null;
            while (iterator.isValid() && keys != null && !keys.test(key = iterator.key())) {
                iterator.next();
            }
            if (!iterator.isValid()) {
                iterator.status();
                return null;
            }
            KeyedRecord next = new KeyedRecord(key != null ? key : iterator.key(), RecordCodec.decode(iterator.value()));
            iterator.next();
            return next;
        });
    }

    @Override
    public void close() {
        store.closeCursor(this);
    }

    /** Frees its native objects; called once, by the store, while the database is open. */
    void release() {
        if (released) {
            return;
        }
        released = true;
        iterator.close();
        readOptions.close();
        if (upperBound != null) {
            upperBound.close();
        }
        store.db().releaseSnapshot(snapshot);
    }
}
