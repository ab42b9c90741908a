package io.ringkv.storage;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;

import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.DBOptions;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;

import io.ringkv.record.KeyedRecord;
import io.ringkv.record.Record;

/**
 * A store's checkpoint ({@link RocksStore#checkpoint}) opened read-only, apart from any live
 * store: what a backup describes in its manifest and what a restore streams. It owns its own
 * handle, opened with default options (reads only, so none of the live store's tuning matters)
 * and closed with it; nothing it does can change the checkpoint.
 */
public final class CheckpointReader implements AutoCloseable {

    /** What a checkpoint holds: its keys, how many are deletes, and the range of their versions' timestamps. */
    public record Contents(long records, long tombstones, long oldestTimestamp, long newestTimestamp) {
        static final Contents EMPTY = new Contents(0, 0, 0, 0);
    }

    private final DBOptions options;
    private final ColumnFamilyOptions familyOptions;
    private final RocksDB db;
    private final List<ColumnFamilyHandle> handles;
    private final ColumnFamilyHandle records;
    /** Null in a checkpoint taken before records could expire. */
    private final ColumnFamilyHandle expiring;
    private final ColumnFamilyHandle byToken;
    /** Closed before the database, which must outlive every iterator on it. */
    private final List<RocksIterator> iterators = new ArrayList<>();

    private CheckpointReader(Path directory) throws RocksDBException {
        List<byte[]> names;
        try (Options listing = new Options()) {
            names = RocksDB.listColumnFamilies(listing, directory.toString());
        }
        options = new DBOptions();
        familyOptions = new ColumnFamilyOptions();
        List<ColumnFamilyDescriptor> descriptors = names.stream().map(name -> new ColumnFamilyDescriptor(name, familyOptions)).toList();
        handles = new ArrayList<>();
        db = RocksDB.openReadOnly(options, directory.toString(), descriptors, handles);
        records = family(names, RocksStore.RECORDS);
        byToken = family(names, RocksStore.BY_TOKEN);
        expiring = optionalFamily(names, RocksStore.EXPIRING);
    }

    private ColumnFamilyHandle family(List<byte[]> names, byte[] name) {
        ColumnFamilyHandle family = optionalFamily(names, name);
        if (family == null) {
            close();
            throw new StorageException("not a ringkv store's checkpoint: it has no column family " + new String(name));
        }
        return family;
    }

    private ColumnFamilyHandle optionalFamily(List<byte[]> names, byte[] name) {
        for (int i = 0; i < names.size(); i++) {
            if (Arrays.equals(names.get(i), name)) {
                return handles.get(i);
            }
        }
        return null;
    }

    public static CheckpointReader open(Path directory) {
        try {
            return new CheckpointReader(directory);
        } catch (RocksDBException e) {
            throw new StorageException("cannot open the checkpoint in " + directory + ": " + e.getMessage(), e);
        }
    }

    /** Counts the keys and their versions from the token index, which holds every version without its value. Blocking. */
    public Contents contents() {
        long count = 0;
        long tombstones = 0;
        long oldest = Long.MAX_VALUE;
        long newest = Long.MIN_VALUE;
        try (RocksIterator iterator = db.newIterator(byToken)) {
            for (iterator.seekToFirst(); iterator.isValid(); iterator.next()) {
                Record version = TokenIndex.versionRecord(iterator.value());
                count++;
                tombstones += version.tombstone() ? 1 : 0;
                oldest = Math.min(oldest, version.timestamp());
                newest = Math.max(newest, version.timestamp());
            }
            iterator.status();
        } catch (RocksDBException e) {
            throw new StorageException("cannot read the checkpoint's token index: " + e.getMessage(), e);
        }
        return count == 0 ? Contents.EMPTY : new Contents(count, tombstones, oldest, newest);
    }

    /**
     * Every record, tombstones included, in key order. Blocking as it is iterated; the iterator
     * is valid until the reader closes.
     */
    public Iterator<KeyedRecord> records() {
        RecordWalk walk = new RecordWalk(fromFirst(records), expiring == null ? null : fromFirst(expiring), null);
        return new Iterator<>() {
            private KeyedRecord next;
            private boolean finished;

            @Override
            public boolean hasNext() {
                if (next == null && !finished) {
                    try {
                        next = walk.next();
                    } catch (RocksDBException e) {
                        throw new StorageException("cannot read the checkpoint's records: " + e.getMessage(), e);
                    } finally {
                        finished = next == null;
                    }
                }
                return next != null;
            }

            @Override
            public KeyedRecord next() {
                if (!hasNext()) {
                    throw new NoSuchElementException();
                }
                KeyedRecord record = next;
                next = null;
                return record;
            }
        };
    }

    private RocksIterator fromFirst(ColumnFamilyHandle family) {
        RocksIterator iterator = db.newIterator(family);
        iterators.add(iterator);
        iterator.seekToFirst();
        return iterator;
    }

    /** Closes the handles, then the database, then the options they use. */
    @Override
    public void close() {
        iterators.forEach(RocksIterator::close);
        handles.forEach(ColumnFamilyHandle::close);
        db.close();
        familyOptions.close();
        options.close();
    }
}
