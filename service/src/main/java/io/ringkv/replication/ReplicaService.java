package io.ringkv.replication;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.ringkv.peer.PeerService;
import io.ringkv.peer.PeerStatus;
import io.ringkv.ring.ClusterMembership;
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
    private final ClusterMembership membership;
    private final ReplicaHistory history;
    private final Counter refusedTimestamps;

    public ReplicaService(String name, RocksStore store, HybridClock clock, ClusterMembership membership,
            ReplicaHistory history, MeterRegistry meters) {
        this.name = name;
        this.store = store;
        this.clock = clock;
        this.membership = membership;
        this.history = history;
        this.refusedTimestamps = Counter.builder("ringkv.clock.refused")
                .description("Timestamps from other nodes refused: more than ringkv.clock.max-offset ahead of this clock")
                .register(meters);
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

    /** Refused (and counted) when the record is stamped further ahead of this clock than it may be. */
    @Override
    public CompletableFuture<?> write(byte[] key, Record record) {
        if (!clock.observe(record.timestamp())) {
            refusedTimestamps.increment();
            return CompletableFuture.failedFuture(new ClockSkewException(record.timestamp()));
        }
        return store.apply(key, record);
    }

    @Override
    public PeerStatus status() {
        return new PeerStatus(membership.state(name).ordinal(), history.purgedBefore());
    }

    @Override
    public void repaired(String peer, long startedMillis) {
        history.repaired(peer, startedMillis);
    }

    @Override
    public long[] digest(long[] intervals) {
        long[] digests = new long[intervals.length];
        for (int i = 0; i < intervals.length; i += 2) {
            RocksStore.Digest digest = store.digest(intervals[i], intervals[i + 1]);
            digests[i] = digest.hash();
            digests[i + 1] = digest.keys();
        }
        return digests;
    }

    @Override
    public RecordCursor openTokenRange(long low, long high) {
        return store.openTokenRange(low, high);
    }

    @Override
    public RecordCursor openRange(byte[] start, byte[] end) {
        return store.openRange(start, end);
    }
}
