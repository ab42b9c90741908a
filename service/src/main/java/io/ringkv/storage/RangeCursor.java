package io.ringkv.storage;

import java.util.function.Predicate;

import org.rocksdb.ReadOptions;
import org.rocksdb.RocksIterator;
import org.rocksdb.Slice;
import org.rocksdb.Snapshot;

import io.ringkv.record.KeyedRecord;

/**
 * A forward scan over one snapshot of the records ({@link RocksStore#openRange}), those that
 * expire included ({@link RecordWalk}), optionally of the keys that pass a test only. It borrows
 * the store's handle; the store releases the cursors still open when it closes, before the
 * database.
 */
public final class RangeCursor implements RecordCursor {

    private final RocksStore store;
    private final Snapshot snapshot;
    private final Slice upperBound;
    private final ReadOptions readOptions;
    private final RocksIterator plain;
    private final RocksIterator expiring;
    private final RecordWalk walk;
    private boolean released;

    RangeCursor(RocksStore store, byte[] start, byte[] end, Predicate<byte[]> keys) {
        this.store = store;
        snapshot = store.db().getSnapshot();
        upperBound = end == null ? null : new Slice(end);
        readOptions = new ReadOptions().setSnapshot(snapshot)
                // A scan reads each block once: keep it from evicting the point reads' working set.
                .setFillCache(false);
        if (upperBound != null) {
            readOptions.setIterateUpperBound(upperBound);
        }
        plain = store.db().newIterator(store.families().records(), readOptions);
        plain.seek(start);
        expiring = store.db().newIterator(store.families().expiring(), readOptions);
        expiring.seek(start);
        walk = new RecordWalk(plain, expiring, keys);
    }

    @Override
    public KeyedRecord next() {
        return store.guarded(() -> {
            if (released) {
                throw new StorageException("the range cursor is closed");
            }
            return walk.next();
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
        plain.close();
        expiring.close();
        readOptions.close();
        if (upperBound != null) {
            upperBound.close();
        }
        store.db().releaseSnapshot(snapshot);
    }
}
