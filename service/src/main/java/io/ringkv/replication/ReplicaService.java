package io.ringkv.replication;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;

import io.ringkv.peer.PeerService;
import io.ringkv.storage.Record;
import io.ringkv.storage.RecordCursor;
import io.ringkv.storage.RocksStore;

/**
 * The replica side of replication: what this node does when a coordinator elsewhere reads or
 * writes one of its keys, or streams its records for a range. Writes carry the coordinator's
 * timestamp; this node's clock observes it, so that its own later writes order after it.
 */
public final class ReplicaService implements PeerService {

    private final String name;
    private final RocksStore store;
    private final HybridClock clock;

    public ReplicaService(String name, RocksStore store, HybridClock clock) {
        this.name = name;
        this.store = store;
        this.clock = clock;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public Optional<Record> read(byte[] key) {
        return store.get(key);
    }

    @Override
    public RocksStore.Lookup readIfCached(byte[] key) {
        return store.getIfCached(key);
    }

    @Override
    public CompletableFuture<?> write(byte[] key, Record record) {
        clock.observe(record.timestamp());
        return store.apply(key, record);
    }

    @Override
    public RecordCursor openRange(byte[] start, byte[] end) {
        return store.openRange(start, end);
    }
}
