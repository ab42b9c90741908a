package io.ringkv.storage;

import java.nio.ByteBuffer;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToLongFunction;

import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.WriteBatch;

import io.ringkv.record.HybridClock;
import io.ringkv.record.Record;
import io.ringkv.record.RecordCodec;

/**
 * What the writer thread ({@link WriteQueue}) does with each batch: applies its writes in order,
 * each against what the store and the earlier writes of the batch hold, in one atomic RocksDB
 * write. A record's indexes ({@link TokenIndex}, {@link TombstoneIndex}) change in the same batch
 * as the record. Writes keep the newest version only, by the version order given at open: a
 * replica that receives an older write than it holds (reordered or retried) leaves its record alone.
 * A record that expires goes to the {@code expiring} family, any other to {@code records}, and a
 * key moving between the two leaves the other in the same batch.
 */
final class BatchCommit {

    private static final byte[] NOTHING = new byte[0];

    private final RocksStore store;
    private final Comparator<Record> versionOrder;
    private final ToLongFunction<byte[]> token;
    /** Where the writer thread reads a stored record's header: only the writer uses it. */
    private final byte[] storedHeader = new byte[RecordCodec.HEADER_SIZE];

    BatchCommit(RocksStore store, Comparator<Record> versionOrder, ToLongFunction<byte[]> token) {
        this.store = store;
        this.versionOrder = versionOrder;
        this.token = token;
    }

    /**
     * Called by the writer thread alone.
     *
     * @return for each write, whether it changed the store
     */
    boolean[] commit(List<WriteQueue.Write> batch) {
        return store.guarded(() -> {
            boolean[] changed = new boolean[batch.size()];
            Map<ByteBuffer, Held> pending = new HashMap<>();
            Map<ByteBuffer, byte[]> pendingStates = new HashMap<>();
            try (WriteBatch rocks = new WriteBatch()) {
                for (int i = 0; i < batch.size(); i++) {
                    WriteQueue.Write write = batch.get(i);
                    changed[i] = switch (write.kind()) {
                        case RECORD, REMOVE -> commitRecord(write, pending, rocks);
                        case HINT_PUT -> put(rocks, store.families().hints(), write.key(), write.bytes());
                        case HINT_DELETE -> delete(rocks, store.families().hints(), write.key());
                        case META_PUT -> put(rocks, store.families().meta(), write.key(), write.bytes());
                        case PAXOS_CHANGE -> changeState(write, pendingStates, rocks);
                    };
                }
                if (rocks.count() > 0) {
                    store.db().write(store.options().writes(), rocks);
                }
            }
            return changed;
        });
    }

    /** A record write or removal, with its indexes, against the store and the batch so far. */
    private boolean commitRecord(WriteQueue.Write write, Map<ByteBuffer, Held> pending, WriteBatch rocks)
            throws RocksDBException {
        byte[] key = write.key();
        ByteBuffer id = ByteBuffer.wrap(key);
        Held current = pending.containsKey(id) ? pending.get(id) : stored(key, write.record());
        Record currentRecord = current == null ? null : current.record();
        Record next = write.kind() == WriteQueue.Kind.REMOVE ? removed(currentRecord, write.record()) : newer(currentRecord, write.record());
        if (next == currentRecord) {
            return false;
        }
        Held held = next == null ? null : Held.of(next);
        pending.put(id, held);
        if (current != null) {
            byte[] indexed = current.tombstoneIndexKey(key);
            if (indexed != null) {
                rocks.delete(store.families().tombstonesByTime(), indexed);
            }
            if (held == null || held.expiring() != current.expiring()) {
                rocks.delete(current.family(store.families()), key);
            }
        }
        byte[] tokenKey = TokenIndex.tokenKey(token.applyAsLong(key), key);
        if (held == null) {
            rocks.delete(store.families().byToken(), tokenKey);
        } else {
            rocks.put(held.family(store.families()), key, held.expiring() ? ExpiringRows.of(next) : next.encoded());
            rocks.put(store.families().byToken(), tokenKey, TokenIndex.version(next));
            byte[] indexed = held.tombstoneIndexKey(key);
            if (indexed != null) {
                rocks.put(store.families().tombstonesByTime(), indexed, held.tombstoneIndexValue());
            }
        }
        return true;
    }

    /**
     * A key's record as the store holds it: in which family, and for one in {@code expiring}, its
     * row's expiry (which the row keeps after compaction turned the value into its tombstone).
     */
    private record Held(Record record, boolean expiring, long expiresAt) {

        static Held of(Record record) {
            return new Held(record, record.expiresAt() != Record.NEVER, record.expiresAt());
        }

        ColumnFamilyHandle family(RocksStore.Families families) {
            return expiring ? families.expiring() : families.records();
        }

        /**
         * Its entry in the tombstone index, if it has one: a tombstone's at its timestamp; a record
         * that expires (or its tombstone) at its expiry, so the purge reaches it once it expired.
         */
        byte[] tombstoneIndexKey(byte[] key) {
            if (expiring) {
                return TombstoneIndex.indexKey(HybridClock.timestampAt(expiresAt), key);
            }
            return record.tombstone() ? TombstoneIndex.indexKey(record.timestamp(), key) : null;
        }

        byte[] tombstoneIndexValue() {
            return expiring ? TombstoneIndex.expiredVersion(record.timestamp()) : NOTHING;
        }
    }

    /** A change of a key's consensus state, against the store and the batch so far. */
    private boolean changeState(WriteQueue.Write write, Map<ByteBuffer, byte[]> pending, WriteBatch rocks) throws RocksDBException {
        ByteBuffer id = ByteBuffer.wrap(write.key());
        byte[] current = pending.containsKey(id) ? pending.get(id) : store.db().get(store.families().paxos(), write.key());
        byte[] next = write.change().apply(current);
        if (next == current || next == null) {
            return false;
        }
        pending.put(id, next);
        rocks.put(store.families().paxos(), write.key(), next);
        return true;
    }

    /**
     * What the store holds for the key, as much as deciding about {@code incoming} needs: most
     * often only its version (its header, copied out of RocksDB without the value), and the whole
     * record only when the two versions tie and their values decide. Every write reads the key's
     * record first; reading the value as well cost a copy of it on the heap for nothing. Assumes,
     * as {@code LastWriteWins} does, a version order that compares values only between two
     * values of the same timestamp.
     */
    private Held stored(byte[] key, Record incoming) throws RocksDBException {
        int length = store.db().get(store.families().records(), key, storedHeader);
        if (length == RocksDB.NOT_FOUND) {
            // Rows of expiring records are read whole: they are the rarer kind, and small ones mostly.
            byte[] row = store.db().get(store.families().expiring(), key);
            if (row == null) {
                return null;
            }
            ExpiringRows.Row read = ExpiringRows.read(row);
            return new Held(read.record(), true, read.expiresAt());
        }
        Record version = RecordCodec.decodeVersion(storedHeader, length);
        boolean valuesDecide = !version.tombstone() && !incoming.tombstone() && version.timestamp() == incoming.timestamp();
        if (!valuesDecide) {
            return new Held(version, false, Record.NEVER);
        }
        byte[] whole = store.db().get(store.families().records(), key);
        return whole == null ? null : new Held(RecordCodec.decode(whole), false, Record.NEVER);
    }

    private static boolean put(WriteBatch rocks, ColumnFamilyHandle family, byte[] key, byte[] value) throws RocksDBException {
        rocks.put(family, key, value);
        return true;
    }

    private static boolean delete(WriteBatch rocks, ColumnFamilyHandle family, byte[] key) throws RocksDBException {
        rocks.delete(family, key);
        return true;
    }

    /** The record to keep: the incoming one if it is newer, else the current one (the same object). */
    private Record newer(Record current, Record incoming) {
        return current == null || versionOrder.compare(incoming, current) > 0 ? incoming : current;
    }

    /**
     * Nothing if the current record is that version, else the current record. A tombstone's
     * version also names the value of its timestamp that expired and that compaction has not yet
     * turned into that tombstone: the purge reaches such an entry only after its expiry.
     */
    private static Record removed(Record current, Record version) {
        boolean same = current != null && current.timestamp() == version.timestamp()
                && (current.tombstone() == version.tombstone() || version.tombstone() && current.expiresAt() != Record.NEVER);
        return same ? null : current;
    }
}
