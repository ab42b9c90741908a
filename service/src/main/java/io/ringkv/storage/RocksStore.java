package io.ringkv.storage;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Predicate;

import org.rocksdb.Checkpoint;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.FlushOptions;
import org.rocksdb.Holder;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;

import io.ringkv.record.Record;
import io.ringkv.record.RecordCodec;

/**
 * Owns the RocksDB instance of a node: the handle, its options ({@link StoreOptions}), its column
 * families, the one thread that writes ({@link WriteQueue}), and closing them all in the right
 * order. The other storage classes borrow the handle, one column family each; none outlives it.
 * Reads may come from any thread; every method that can wait for the disk is blocking and runs on
 * the storage scheduler, except {@link #getIfCached}, which never touches the disk and so may run
 * on an event loop.
 *
 * <p>Layout, in column families:
 * <ul>
 * <li>{@code records}: each key's newest version, a value or a tombstone ({@link RecordCodec}),
 * so a read is one look-up;
 * <li>{@code expiring}: the same for the keys whose newest version expires, as rows that let
 * compaction drop an expired value ({@link ExpiringRows}); a key is in one of the two at most, and
 * a read of a key not in {@code records} looks here (a Bloom filter answers most such look-ups);
 * <li>{@code tombstones-by-time}: the tombstones by their timestamp ({@link TombstoneIndex});
 * <li>{@code by-token}: every key by its position on the hash ring, with its version
 * ({@link TokenIndex}): what repair and data movement read;
 * <li>{@code hints}: writes waiting for a replica that missed them ({@link HintStore});
 * <li>{@code meta}: the node's own small facts (its state, repair times), {@link MetaStore};
 * <li>{@code paxos}: the consensus state of each key a conditional request used ({@link ConsensusStates}).
 * </ul>
 * The indexes change in the same atomic batch as the record they index ({@link BatchCommit}).
 *
 * <p>Writes are a read-modify-write, done by a single writer thread that takes every write
 * waiting and commits them in one batch: no locks, one write-ahead-log append (and with
 * {@code syncWrites} one fsync) for many writes, and no pile-up of threads inside RocksDB.
 */
public final class RocksStore implements AutoCloseable {

    static final byte[] RECORDS = "records".getBytes(StandardCharsets.UTF_8);
    private static final byte[] TOMBSTONES_BY_TIME = "tombstones-by-time".getBytes(StandardCharsets.UTF_8);
    static final byte[] BY_TOKEN = "by-token".getBytes(StandardCharsets.UTF_8);
    private static final byte[] HINTS = "hints".getBytes(StandardCharsets.UTF_8);
    private static final byte[] META = "meta".getBytes(StandardCharsets.UTF_8);
    private static final byte[] PAXOS = "paxos".getBytes(StandardCharsets.UTF_8);
    static final byte[] EXPIRING = "expiring".getBytes(StandardCharsets.UTF_8);
    private static final byte[] NOTHING = new byte[0];

    static {
        RocksDB.loadLibrary();
    }

    /** What a read that may not touch the disk found. */
    public record Lookup(boolean known, Record record) {
        /** Not answered from memory: the caller reads on a storage thread. */
        public static final Lookup NOT_CACHED = new Lookup(false, null);
        static final Lookup ABSENT = new Lookup(true, null);

        /** The record, or empty for none; only when {@link #known()}. */
        public Optional<Record> found() {
            return Optional.ofNullable(record);
        }
    }

    private final StoreOptions options;
    private final Path directory;
    private final RocksDB db;
    private final Families families;
    /** The records' families, which this class reads itself. */
    private static final String ACTIVE_MEMTABLE_ENTRIES = "rocksdb.num-entries-active-mem-table";

    private final ColumnFamilyHandle records;
    private final ColumnFamilyHandle expiring;
    private final WriteQueue writes;

    /** Operations hold it shared; {@link #close()} takes it exclusively, so no native call outlives the handle. */
    private final ReentrantReadWriteLock lifecycle = new ReentrantReadWriteLock();
    private final Set<RangeCursor> openCursors = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;
    /** Point reads answered from memory by getIfCached, and those that had to go to get. */
    /** The records' and the expiring records' active memtable entries at the last {@link #flushIfQuiet}. */
    private long recordsInMemtablesSeen = -1;
    private final LongAdder readsFromMemory = new LongAdder();
    private final LongAdder readsNotInMemory = new LongAdder();

    private RocksStore(StorageSettings settings, Comparator<Record> versionOrder) throws RocksDBException {
        options = new StoreOptions(settings);
        directory = settings.directory();
        List<byte[]> existing = existingColumnFamilies(directory);
        List<ColumnFamilyDescriptor> descriptors = new ArrayList<>();
        descriptors.add(new ColumnFamilyDescriptor(RocksDB.DEFAULT_COLUMN_FAMILY, options.records()));
        descriptors.add(new ColumnFamilyDescriptor(RECORDS, options.records()));
        descriptors.add(new ColumnFamilyDescriptor(TOMBSTONES_BY_TIME, options.indexes()));
        descriptors.add(new ColumnFamilyDescriptor(BY_TOKEN, options.indexes()));
        descriptors.add(new ColumnFamilyDescriptor(HINTS, options.indexes()));
        descriptors.add(new ColumnFamilyDescriptor(META, options.indexes()));
        descriptors.add(new ColumnFamilyDescriptor(PAXOS, options.indexes()));
        descriptors.add(new ColumnFamilyDescriptor(EXPIRING, options.expiring()));
        List<byte[]> previousLayout = PreviousLayout.columnFamilies(existing);
        previousLayout.forEach(name -> descriptors.add(new ColumnFamilyDescriptor(name, options.records())));
        boolean tokenIndexIsNew = !existing.isEmpty() && existing.stream().noneMatch(name -> Arrays.equals(name, BY_TOKEN));
        List<ColumnFamilyHandle> handles = new ArrayList<>();
        db = RocksDB.open(options.database(), directory.toString(), descriptors, handles);
        // The default family exists because RocksDB requires it; nothing is stored there.
        handles.get(0).close();
        families = new Families(handles.get(1), handles.get(2), handles.get(3), handles.get(4), handles.get(5), handles.get(6),
                handles.get(7));
        records = families.records();
        expiring = families.expiring();
        if (!previousLayout.isEmpty()) {
            PreviousLayout.migrate(this, settings.token(), handles.subList(Families.COUNT + 1, handles.size()));
        } else if (tokenIndexIsNew) {
            // Records written by a version without the index: index them once.
            PreviousLayout.indexTokens(this, settings.token());
        }
        writes = new WriteQueue(new BatchCommit(this, versionOrder, settings.token())::commit, settings.writeQueueSize(),
                settings.writeQueueBytes());
    }

    public static RocksStore open(StorageSettings settings, Comparator<Record> versionOrder) {
        try {
            Files.createDirectories(settings.directory());
            return new RocksStore(settings, versionOrder);
        } catch (RocksDBException | java.io.IOException e) {
            throw new StorageException("cannot open the store in " + settings.directory() + ": " + e.getMessage(), e);
        }
    }

    private static List<byte[]> existingColumnFamilies(Path directory) throws RocksDBException {
        try (Options listing = new Options()) {
            return RocksDB.listColumnFamilies(listing, directory.toString());
        }
    }

    // ---- reads ---------------------------------------------------------------------------------

    /** The newest record this replica holds for the key, tombstones included. Blocking. */
    public Optional<Record> get(byte[] key) {
        return guarded(() -> Optional.ofNullable(read(key)));
    }

    /** The key's record, from whichever of the two families holds it; null for none. */
    Record read(byte[] key) throws RocksDBException {
        byte[] plain = db.get(records, key);
        if (plain != null) {
            return RecordCodec.decode(plain);
        }
        byte[] row = db.get(expiring, key);
        return row == null ? null : ExpiringRows.recordOf(row);
    }

    /**
     * The key's record if answering needs no disk read (it is in a memtable or the block cache),
     * else {@link Lookup#known()} is false and the caller asks {@link #get} on the storage
     * scheduler. Never blocks: safe on an event loop, where most reads of a working set that fits
     * the cache are answered without a thread hop.
     */
    public Lookup getIfCached(byte[] key) {
        // A store being closed is not waited for: the blocking path will report it.
        if (!lifecycle.readLock().tryLock()) {
            return Lookup.NOT_CACHED;
        }
        try {
            if (closed) {
                return Lookup.NOT_CACHED;
            }
            // keyMayExist reads only memory, like a get at the block-cache tier, but reports a
            // record that is not in memory by its answer rather than by an exception, whose
            // stack trace cost more than the rest of the look-up.
            Holder<byte[]> found = new Holder<>();
            ColumnFamilyHandle family = records;
            if (!db.keyMayExist(records, options.cachedReads(), key, found)) {
                found = new Holder<>();
                family = expiring;
                if (!db.keyMayExist(expiring, options.cachedReads(), key, found)) {
                    readsFromMemory.increment();
                    return Lookup.ABSENT;
                }
            }
            // An empty value is a miss too: RocksDB reports "found" with no value when the table's
            // index block is not in the cache (facebook/rocksdb#12921), and a record is never empty.
            if (found.getValue() == null || found.getValue().length == 0) {
                readsNotInMemory.increment();
                return Lookup.NOT_CACHED;
            }
            readsFromMemory.increment();
            byte[] stored = found.getValue();
            return new Lookup(true, family == records ? RecordCodec.decode(stored) : ExpiringRows.recordOf(stored));
        } finally {
            lifecycle.readLock().unlock();
        }
    }

    // ---- writes --------------------------------------------------------------------------------

    /**
     * Stores the record unless this replica already holds a version that is at least as new.
     * Never blocks: the write is queued for the writer thread.
     *
     * @return completes with whether the record was written, once it is in the write-ahead log;
     *         fails with {@link StorageOverloadedException} at once when too many writes, or too
     *         many bytes of values, wait
     */
    public CompletableFuture<Boolean> apply(byte[] key, Record record) {
        return submit(new WriteQueue.Write(WriteQueue.Kind.RECORD, key, record, null));
    }

    /**
     * Removes the key's record if it is still exactly this version: its timestamp and whether it
     * is a tombstone (a newer write may have replaced it meanwhile); through the writer, like
     * every change. For tombstones past their grace period, and for keys this node no longer owns.
     *
     * @return completes with whether the record was removed
     */
    public CompletableFuture<Boolean> removeIfUnchanged(byte[] key, Record version) {
        return submit(new WriteQueue.Write(WriteQueue.Kind.REMOVE, key, version, null));
    }

    /** Queues a change for the writer, the one way every change goes; never blocks. */
    CompletableFuture<Boolean> submit(WriteQueue.Write write) {
        return writes.submit(write);
    }

    // ---- the whole store -----------------------------------------------------------------------

    /**
     * Opens a cursor over {@code start <= key < end} (a null end: to the last key) in ascending
     * unsigned byte order, tombstones included, as of one snapshot. The caller must close it.
     */
    public RangeCursor openRange(byte[] start, byte[] end) {
        return openRange(start, end, null);
    }

    /**
     * The same, of the keys that pass {@code keys} only (null: every key): the values of the others
     * are skipped unread, so a scan for a few of the keys costs little more than a walk of them.
     */
    public RangeCursor openRange(byte[] start, byte[] end, Predicate<byte[]> keys) {
        return guarded(() -> {
            RangeCursor cursor = new RangeCursor(this, start, end, keys);
            openCursors.add(cursor);
            return cursor;
        });
    }

    /** A cursor's close: released now, unless the store closed and released it already. */
    void closeCursor(RangeCursor cursor) {
        lifecycle.readLock().lock();
        try {
            if (!closed && openCursors.remove(cursor)) {
                cursor.release();
            }
        } finally {
            lifecycle.readLock().unlock();
        }
    }

    /** Whether the store holds no record at all. Blocking, at start. */
    public boolean isEmpty() {
        return guarded(() -> {
            for (ColumnFamilyHandle family : List.of(records, expiring)) {
                try (RocksIterator iterator = db.newIterator(family)) {
                    iterator.seekToFirst();
                    iterator.status();
                    if (iterator.isValid()) {
                        return false;
                    }
                }
            }
            return true;
        });
    }

    /**
     * Forgets everything: records, their indexes, hints and the node's own facts. Blocking; only
     * at start, before anything reads or writes (a volume whose node left the cluster comes back:
     * its data is older than what the cluster may have purged since).
     */
    public void clear() {
        guarded(() -> {
            for (ColumnFamilyHandle family : families.all()) {
                byte[] last;
                try (RocksIterator iterator = db.newIterator(family)) {
                    iterator.seekToLast();
                    iterator.status();
                    last = iterator.isValid() ? iterator.key() : null;
                }
                if (last != null) {
                    // The end of a range delete is exclusive: the last key goes on its own.
                    db.deleteRange(family, NOTHING, last);
                    db.delete(family, last);
                    db.compactRange(family);
                }
            }
            return null;
        });
    }

    /**
     * Writes a consistent copy of the whole store into {@code directory}, which must not exist yet:
     * RocksDB's checkpoint, which flushes the memtables and hard-links the table files (on the same
     * file system; it copies them elsewhere). Writes go on meanwhile; the copy holds every write
     * committed before it began. Blocking. For backups ({@code io.ringkv.backup}).
     */
    public void checkpoint(Path directory) {
        guarded(() -> {
            try (Checkpoint checkpoint = Checkpoint.create(db)) {
                checkpoint.createCheckpoint(directory.toString());
            }
            return null;
        });
    }

    /**
     * The store's identity: RocksDB's {@code IDENTITY}, made with the store, so a wiped and
     * refilled data directory has a new one (its table file numbers start again). Blocking.
     */
    public String identity() {
        try {
            return Files.readString(directory.resolve("IDENTITY"), StandardCharsets.UTF_8).trim();
        } catch (java.io.IOException e) {
            throw new StorageException("cannot read the store's identity in " + directory + ": " + e.getMessage(), e);
        }
    }

    /** Flushes the memtables and compacts everything now. */
    public void compact() {
        guarded(() -> {
            try (FlushOptions flush = new FlushOptions().setWaitForFlush(true)) {
                db.flush(flush, families.all());
            }
            for (ColumnFamilyHandle family : List.of(records, expiring, families.tombstonesByTime(), families.byToken(), families.hints())) {
                db.compactRange(family);
            }
            return null;
        });
    }

    /**
     * Flushes every memtable when no record was written since the last call and some are in
     * memory, then compacts the two indexes: a store no longer written to would otherwise keep
     * them, in memory and in its write-ahead log, for good, and compaction, which drops expired
     * values and purged records, never sees what is only in a memtable. The indexes' few files
     * would stay in level 0 (a purge's deletes in one, the entries they delete in another, each
     * rewritten alone by periodic compaction); compacted whole, the two cancel out. They hold
     * keys only: a small part of the store, rewritten once per quiet spell. A store being written
     * to flushes and compacts by itself. Blocking; for one periodic caller.
     *
     * @return whether it flushed
     */
    public boolean flushIfQuiet() {
        return guarded(() -> {
            long inMemtables = db.getLongProperty(records, ACTIVE_MEMTABLE_ENTRIES) + db.getLongProperty(expiring, ACTIVE_MEMTABLE_ENTRIES);
            boolean quiet = inMemtables > 0 && inMemtables == recordsInMemtablesSeen;
            recordsInMemtablesSeen = inMemtables;
            if (quiet) {
                try (FlushOptions flush = new FlushOptions().setWaitForFlush(true)) {
                    db.flush(flush, families.all());
                }
                db.compactRange(families.tombstonesByTime());
                db.compactRange(families.byToken());
            }
            return quiet;
        });
    }

    // ---- figures -------------------------------------------------------------------------------

    /** A RocksDB property of the records, summed over their two families (sizes, counts), for metrics. */
    public long longProperty(String name) {
        return guarded(() -> db.getLongProperty(records, name) + db.getLongProperty(expiring, name));
    }

    /** Block reads served by the block cache since the store opened, as a share of all block reads. */
    public double blockCacheHitRatio() {
        return guarded(options::blockCacheHitRatio);
    }

    /** Point reads answered from memory (a memtable or the block cache) since the store opened. */
    public long readsFromMemory() {
        return readsFromMemory.sum();
    }

    /** Point reads that memory could not answer since the store opened (they read the disk). */
    public long readsNotInMemory() {
        return readsNotInMemory.sum();
    }

    /** Writes waiting for the writer now. */
    public int pendingWrites() {
        return writes.size();
    }

    /** Bytes of values waiting for the writer, or in the batch it commits, now. */
    public long pendingWriteBytes() {
        return writes.valueBytes();
    }

    // ---- lifecycle -----------------------------------------------------------------------------

    /**
     * Lets the writer finish what is queued, then closes open cursors, the column families, the
     * database and last the options they use.
     */
    @Override
    public void close() {
        if (writes != null) {
            writes.close();
        }
        lifecycle.writeLock().lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            openCursors.forEach(RangeCursor::release);
            openCursors.clear();
            families.all().forEach(ColumnFamilyHandle::close);
            try {
                db.syncWal();
            } catch (RocksDBException e) {
                // Closing goes on: the WAL was written on every acknowledged write already.
            }
            db.close();
            options.close();
        } finally {
            lifecycle.writeLock().unlock();
        }
    }

    public boolean isOpen() {
        return !closed;
    }

    interface StoreCall<T> {
        T run() throws RocksDBException;
    }

    /** Runs a call on the handle while the store is open; what borrows the handle goes through here. */
    <T> T guarded(StoreCall<T> call) {
        lifecycle.readLock().lock();
        try {
            if (closed) {
                throw new StorageException("the store is closed");
            }
            return call.run();
        } catch (RocksDBException e) {
            throw new StorageException(e.getMessage(), e);
        } finally {
            lifecycle.readLock().unlock();
        }
    }

    // ---- what the borrowers use ----------------------------------------------------------------

    /** The column families a node keeps, by what each holds. */
    record Families(ColumnFamilyHandle records, ColumnFamilyHandle tombstonesByTime, ColumnFamilyHandle byToken,
            ColumnFamilyHandle hints, ColumnFamilyHandle meta, ColumnFamilyHandle paxos, ColumnFamilyHandle expiring) {

        static final int COUNT = 7;

        List<ColumnFamilyHandle> all() {
            return List.of(records, tombstonesByTime, byToken, hints, meta, paxos, expiring);
        }
    }

    RocksDB db() {
        return db;
    }

    StoreOptions options() {
        return options;
    }

    Families families() {
        return families;
    }
}
