package io.ringkv.storage;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import org.rocksdb.RocksIterator;

/**
 * The {@code hints} column family: writes waiting for a replica that missed them, as opaque keys
 * and values (their layout is hinted hand-off's). It borrows the store's handle; changes go
 * through the store's one writer, like every change.
 */
public final class HintStore {

    private final RocksStore store;

    public HintStore(RocksStore store) {
        this.store = store;
    }

    /** Stores a hint; never blocks. */
    public CompletableFuture<Boolean> put(byte[] hintKey, byte[] value) {
        return store.submit(new WriteQueue.Write(WriteQueue.Kind.HINT_PUT, hintKey, null, value));
    }

    /** Drops a hint; never blocks. */
    public CompletableFuture<Boolean> delete(byte[] hintKey) {
        return store.submit(new WriteQueue.Write(WriteQueue.Kind.HINT_DELETE, hintKey, null, null));
    }

    /**
     * The hints with keys that start with {@code prefix}, in key order, from {@code after}
     * (exclusive; null: from the first), at most {@code max}. Blocking.
     */
    public List<byte[][]> page(byte[] prefix, byte[] after, int max) {
        return store.guarded(() -> {
            List<byte[][]> found = new ArrayList<>();
            try (RocksIterator iterator = store.db().newIterator(store.families().hints())) {
                iterator.seek(after == null ? prefix : after);
                if (after != null && iterator.isValid() && Arrays.equals(iterator.key(), after)) {
                    iterator.next();
                }
                for (; iterator.isValid() && found.size() < max; iterator.next()) {
                    byte[] key = iterator.key();
                    if (!startsWith(key, prefix)) {
                        break;
                    }
                    found.add(new byte[][] {key, iterator.value()});
                }
                iterator.status();
            }
            return found;
        });
    }

    private static boolean startsWith(byte[] bytes, byte[] prefix) {
        return bytes.length >= prefix.length && Arrays.equals(bytes, 0, prefix.length, prefix, 0, prefix.length);
    }
}
