package io.ringkv.replication;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.ringkv.storage.KeyedRecord;
import io.ringkv.storage.Record;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Coordinates a client request across the key's replicas, Dynamo style: it stamps writes with the
 * hybrid clock, sends the operation to all {@code from} replicas at once, and answers as soon as
 * {@code ack} of them have: it never waits for the slowest. Replicas still working when the
 * answer goes out are not cancelled, so they apply the write too.
 */
public final class Coordinator {

    private static final Logger log = LoggerFactory.getLogger(Coordinator.class);
    private static final Comparator<KeyedRecord> BY_KEY = (a, b) -> Arrays.compareUnsigned(a.key(), b.key());
    /** Records buffered per replica stream in a range merge: bounds the heap a range can take. */
    private static final int RANGE_PREFETCH = 16;

    private final ReplicaDirectory replicas;
    private final HybridClock clock;
    private final Duration timeout;

    public Coordinator(ReplicaDirectory replicas, HybridClock clock, Duration timeout) {
        this.replicas = replicas;
        this.clock = clock;
        this.timeout = timeout;
    }

    public int clusterSize() {
        return replicas.ring().size();
    }

    public Mono<Void> put(byte[] key, byte[] value, ReplicationFactor factor) {
        return write(key, Record.value(clock.now(), value), factor);
    }

    public Mono<Void> delete(byte[] key, ReplicationFactor factor) {
        return write(key, Record.tombstone(clock.now()), factor);
    }

    private Mono<Void> write(byte[] key, Record record, ReplicationFactor factor) {
        return quorum(key, factor, replica -> replica.write(key, record)).then();
    }

    /** The newest live value among the first {@code ack} answers; empty if that is a tombstone or nothing. */
    public Mono<Optional<byte[]>> get(byte[] key, ReplicationFactor factor) {
        return quorum(key, factor, replica -> replica.read(key))
                .map(answers -> LastWriteWins.newest(answers)
                        .filter(record -> !record.tombstone())
                        .map(Record::value));
    }

    /**
     * The live records of the whole cluster in {@code [start, end)}, in key order: a k-way merge of
     * every member's sorted stream that keeps the newest version of each key and drops tombstones.
     * Every member must answer: a range that silently skipped one could miss keys it alone holds.
     */
    public Flux<KeyedRecord> range(byte[] start, byte[] end) {
        List<Flux<KeyedRecord>> streams = replicas.all().stream()
                .map(replica -> replica.scan(start, end)
                        .onErrorMap(error -> new NotEnoughReplicasException(
                                "range: " + replica.name() + " did not answer: " + error.getMessage())))
                .toList();
        @SuppressWarnings("unchecked")
        Flux<KeyedRecord>[] sources = streams.toArray(Flux[]::new);
        return Flux.mergeComparing(RANGE_PREFETCH, BY_KEY, sources)
                .bufferUntilChanged(keyed -> ByteBuffer.wrap(keyed.key()))
                .map(versions -> versions.stream().max(Comparator.comparing(KeyedRecord::record, LastWriteWins.ORDER)).orElseThrow())
                .filter(keyed -> !keyed.record().tombstone());
    }

    /**
     * Calls the key's replicas in parallel and emits the first {@code ack} answers, or fails with
     * {@link NotEnoughReplicasException} once {@code ack} can no longer be reached or the timeout passes.
     */
    private <T> Mono<List<T>> quorum(byte[] key, ReplicationFactor factor, Function<Replica, Mono<T>> call) {
        List<Replica> targets = replicas.replicasFor(key, factor.from());
        return Mono.<List<T>>create(sink -> {
                    QuorumCollector<T> collector = new QuorumCollector<>(factor);
                    for (Replica replica : targets) {
                        // Subscribed on its own: answering the client does not cancel the slower replicas.
                        call.apply(replica)
                                .single()
                                // A backstop only: remote calls time out on their own (and their breaker
                                // counts it); this ends any call that did not, so none lingers.
                                .timeout(timeout.multipliedBy(2))
                                .subscribe(
                                        answer -> {
                                            if (collector.success(answer) == QuorumCollector.Outcome.REACHED) {
                                                sink.success(collector.answers());
                                            }
                                        },
                                        error -> {
                                            log.debug("replica {} failed: {}", replica.name(), error.toString());
                                            if (collector.failure() == QuorumCollector.Outcome.FAILED) {
                                                sink.error(new NotEnoughReplicasException(
                                                        "fewer than " + factor.ack() + " of " + factor.from() + " replicas answered"));
                                            }
                                        });
                    }
                })
                .timeout(timeout, Mono.error(() -> new NotEnoughReplicasException(
                        "fewer than " + factor.ack() + " of " + factor.from() + " replicas answered within " + timeout)));
    }
}
