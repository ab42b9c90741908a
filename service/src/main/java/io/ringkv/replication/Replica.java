package io.ringkv.replication;

import java.util.List;
import java.util.Optional;

import io.ringkv.record.KeyedRecord;
import io.ringkv.record.Record;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * One member's store as the coordinator sees it: this node's own through a direct call, a peer's
 * through the peer protocol ({@code io.ringkv.peer}). The coordinator does not know which is which.
 */
public interface Replica {

    String name();

    /** What a call is expected to take now, in milliseconds (infinity: failing); reads ask the cheapest first. */
    double expectedLatencyMillis();

    /**
     * Flow control from this node to the replica: the coordinator makes its reads and writes
     * through it ({@link ReplicaWindow#call}); background work takes its place in it itself.
     */
    ReplicaWindow window();

    /** The replica's newest record for the key, tombstones included; empty if it has none. */
    Mono<Optional<Record>> read(byte[] key);

    /** Stores the record unless the replica already holds a newer version. Emits true once done. */
    Mono<Boolean> write(byte[] key, Record record);

    /**
     * Stores each record unless the replica already holds a newer version of its key; done once
     * all are stored. At most a {@code RecordBatch}'s keys and bytes.
     */
    Mono<Void> writeBatch(List<KeyedRecord> records);

    /** The replica's records with {@code start <= key < end} (null end: all), tombstones included, in key order. */
    Flux<KeyedRecord> scan(byte[] start, byte[] end);
}
