package io.ringkv.replication;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.ringkv.storage.KeyedRecord;
import io.ringkv.storage.Record;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;

/**
 * Coordinates a client request across the key's replicas, Dynamo style, and answers as soon as
 * {@code ack} of them have: it never waits for the slowest. Writes are stamped with the hybrid
 * clock and sent to all {@code from} replicas at once; replicas still working when the answer goes
 * out are not cancelled, so they apply the write too. Reads ask only the {@code ack} cheapest
 * replicas ({@link ReplicaPreference}) and widen to the rest when one of those fails or when no
 * quorum came within the hedge delay, so that a read costs {@code ack} calls, not {@code from}.
 */
public final class Coordinator {

    private static final Logger log = LoggerFactory.getLogger(Coordinator.class);
    private static final Comparator<KeyedRecord> BY_KEY = (a, b) -> Arrays.compareUnsigned(a.key(), b.key());
    /** Records buffered per replica stream in a range merge: bounds the heap a range can take. */
    private static final int RANGE_PREFETCH = 16;

    private final ReplicaDirectory replicas;
    private final HybridClock clock;
    private final Duration timeout;
    private final Duration readHedgeDelay;

    /**
     * @param readHedgeDelay how long a read waits for its first {@code ack} replicas before asking
     *                       the others as well; zero asks all {@code from} at once
     */
    public Coordinator(ReplicaDirectory replicas, HybridClock clock, Duration timeout, Duration readHedgeDelay) {
        this.replicas = replicas;
        this.clock = clock;
        this.timeout = timeout;
        this.readHedgeDelay = readHedgeDelay;
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
        List<Replica> targets = replicas.replicasFor(key, factor.from());
        return quorum(targets, targets.size(), Duration.ZERO, factor, replica -> replica.write(key, record)).then();
    }

    /** The newest live value among the first {@code ack} answers; empty if that is a tombstone or nothing. */
    public Mono<Optional<byte[]>> get(byte[] key, ReplicationFactor factor) {
        List<Replica> targets = ReplicaPreference.cheapestFirst(
                replicas.replicasFor(key, factor.from()), Replica::expectedLatencyMillis);
        int first = readHedgeDelay.isZero() ? targets.size() : factor.ack();
        return quorum(targets, first, readHedgeDelay, factor, replica -> replica.read(key))
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
     * Calls the first {@code initial} targets in parallel, one more target for each that fails,
     * and all the rest once {@code hedgeDelay} (unless zero) passes undecided. Emits the first
     * {@code ack} answers, or fails with {@link NotEnoughReplicasException} once {@code ack} can no
     * longer be reached or the timeout passes.
     */
    private <T> Mono<List<T>> quorum(List<Replica> targets, int initial, Duration hedgeDelay, ReplicationFactor factor,
            Function<Replica, Mono<T>> call) {
        return Mono.create(sink -> {
            Round<T> round = new Round<>(targets, factor, call, sink);
            Disposable deadline = Deadlines.after(timeout, round::expire);
            Disposable hedge = hedgeDelay.isZero() || initial >= targets.size()
                    ? null
                    : Deadlines.after(hedgeDelay, () -> round.ask(targets.size()));
            sink.onDispose(() -> {
                deadline.dispose();
                if (hedge != null) {
                    hedge.dispose();
                }
            });
            round.ask(initial);
        });
    }

    /** The calls of one request to its replicas, asked in the targets' order, each at most once. */
    private final class Round<T> {

        private final List<Replica> targets;
        private final ReplicationFactor factor;
        private final Function<Replica, Mono<T>> call;
        private final MonoSink<List<T>> sink;
        private final QuorumCollector<T> collector;
        private final AtomicInteger asked = new AtomicInteger();

        Round(List<Replica> targets, ReplicationFactor factor, Function<Replica, Mono<T>> call, MonoSink<List<T>> sink) {
            this.targets = targets;
            this.factor = factor;
            this.call = call;
            this.sink = sink;
            this.collector = new QuorumCollector<>(factor);
        }

        void expire() {
            if (collector.expire() == QuorumCollector.Outcome.FAILED) {
                sink.error(new NotEnoughReplicasException(
                        "fewer than " + factor.ack() + " of " + factor.from() + " replicas answered within " + timeout));
            }
        }

        void ask(int count) {
            for (int i = 0; i < count; i++) {
                int index = asked.getAndIncrement();
                if (index >= targets.size()) {
                    return;
                }
                ask(targets.get(index));
            }
        }

        private void ask(Replica replica) {
            // Subscribed on its own: answering the client does not cancel the slower replicas.
            // Each ends by itself: a peer's call times out in its client, a local one in storage.
            call.apply(replica)
                    .single()
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
                                } else {
                                    ask(1);
                                }
                            });
        }
    }
}
