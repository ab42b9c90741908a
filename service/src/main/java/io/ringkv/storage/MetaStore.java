package io.ringkv.storage;

import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * The {@code meta} column family: the node's own small facts (its membership, repair times), by
 * name. It borrows the store's handle; changes go through the store's one writer.
 */
public final class MetaStore {

    private final RocksStore store;

    public MetaStore(RocksStore store) {
        this.store = store;
    }

    /** Stores one of the node's own facts; never blocks. */
    public CompletableFuture<Boolean> put(String key, byte[] value) {
        return store.submit(new WriteQueue.Write(WriteQueue.Kind.META_PUT, key.getBytes(StandardCharsets.UTF_8), null, value));
    }

    /** One of the node's own facts. Blocking (RocksDB), but short: read at start and by background work. */
    public Optional<byte[]> get(String key) {
        return store.guarded(() -> Optional.ofNullable(store.db().get(store.families().meta(), key.getBytes(StandardCharsets.UTF_8))));
    }
}
