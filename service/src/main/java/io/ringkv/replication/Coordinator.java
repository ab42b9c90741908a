package io.ringkv.replication;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongFunction;
import java.util.function.Predicate;
import java.util.function.Supplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.ringkv.lifecycle.Polling;
import io.ringkv.overload.AdmissionControl;
import io.ringkv.overload.OverloadedException;
import io.ringkv.record.HybridClock;
import io.ringkv.record.KeyedRecord;
import io.ringkv.record.LastWriteWins;
import io.ringkv.record.Record;
import io.ringkv.storage.RocksStore;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;

/**
 * Coordinates a client request across the key's replicas, Dynamo style, and answers as soon as
 * {@code ack} of them have: it never waits for the slowest. Writes are stamped with the hybrid
 * clock and sent to all {@code from} replicas at once; replicas still working when the answer goes
 * out are not cancelled, so they apply the write too, and one that fails gets a hint
 * ({@link HintedHandoff}). Reads ask only the first {@code ack} replicas, this node's zone first,
 * then the cheapest ({@link ReplicaPreference}), and widen to the rest when one of those fails or
 * when no quorum came within the hedge delay, so that a read costs {@code ack} calls, not {@code from}.
 *
 * <p>Read repair: when the replicas a read heard disagree, the newest version is written back to
 * the stale ones before the answer goes out, so that two quorum reads in a row never go backwards;
 * answers that come after the quorum and show a stale replica are repaired in the background,
 * a bounded number at a time. When they agree it costs nothing.
 */
public final class Coordinator {

    private static final Logger log = LoggerFactory.getLogger(Coordinator.class);
    private static final Comparator<KeyedRecord> BY_KEY = (a, b) -> Arrays.compareUnsigned(a.key(), b.key());
    /**
     * Records the range merge takes ahead from each replica stream. Counted in records, so kept
     * small: with values of megabytes each one is megabytes of heap. The streams buffer in bytes
     * below it (a peer's credit window, a local scan's batch), so a small prefetch costs no hops.
     */
    private static final int RANGE_PREFETCH = 2;
    private static final Runnable NOTHING = () -> { };
    /** Background read repairs in progress at once; past it, a stale replica waits for anti-entropy. */
    private static final int BACKGROUND_REPAIRS = 64;

    private final ReplicaDirectory replicas;
    private final HybridClock clock;
    private final Duration timeout;
    private final Duration readHedgeDelay;
    private final int replicationFactor;
    private final HintedHandoff hints;
    private final Semaphore backgroundRepairs = new Semaphore(BACKGROUND_REPAIRS);
    /** Replica calls not yet ended, counting those that outlive their client's answer. */
    private final AtomicInteger callsInFlight = new AtomicInteger();
    private final Counter blockingRepairs;
    private final Counter lateRepairs;
    private final Counter readsInZone;
    private final Counter readsAcrossZones;

    /**
     * @param readHedgeDelay    how long a read waits for its first {@code ack} replicas before asking
     *                          the others as well; zero asks all {@code from} at once
     * @param replicationFactor how many replicas a key has when a request does not say
     */
    public Coordinator(ReplicaDirectory replicas, HybridClock clock, Duration timeout, Duration readHedgeDelay,
            int replicationFactor, HintedHandoff hints, MeterRegistry meters) {
        this.replicas = replicas;
        this.clock = clock;
        this.timeout = timeout;
        this.readHedgeDelay = readHedgeDelay;
        this.replicationFactor = replicationFactor;
        this.hints = hints;
        this.blockingRepairs = Counter.builder("ringkv.read.repairs").tag("when", "before-answer")
                .description("Stale replicas a read wrote the newest version back to").register(meters);
        this.lateRepairs = Counter.builder("ringkv.read.repairs").tag("when", "after-answer")
                .description("Stale replicas a read wrote the newest version back to").register(meters);
        this.readsInZone = replicaReads("same", meters);
        this.readsAcrossZones = replicaReads("other", meters);
    }

    /** Where keys live now: one snapshot per request. */
    public Placement placement() {
        return replicas.placement();
    }

    public int replicationFactor() {
        return replicationFactor;
    }

    /**
     * Waits until every replica call has ended, each with its answer or its hint, for at most
     * {@code max}; false if some are still running. Blocking: for shutdown, once no new request
     * can start, so that the peer connections and the store close only after the writes to slower
     * replicas have been made or hinted.
     */
    public boolean awaitCallsEnded(Duration max) throws InterruptedException {
        return Polling.await(() -> callsInFlight.get() == 0, max, Duration.ofMillis(10));
    }

    public int callsInFlight() {
        return callsInFlight.get();
    }

    /** A replica call, counted in flight until it ends, whatever its end (a hint, if it failed, comes first). */
    private <T> Mono<T> counted(Mono<T> call) {
        return Mono.defer(() -> {
            callsInFlight.incrementAndGet();
            return call.doFinally(signal -> callsInFlight.decrementAndGet());
        });
    }

    public Mono<Void> put(byte[] key, byte[] value, ReplicationFactor factor, Placement placement) {
        return put(key, timestamp -> Record.value(timestamp, value), factor, placement, () -> { });
    }

    /**
     * Writes {@code version(timestamp)}, stamped by this node's clock (a value, or one that expires
     * after its time to live), and runs {@code afterLastReplica} once every replica's write has
     * ended (made, failed or hinted), which may be well after the answer: until then the value is
     * still held, for the slower ones. It runs exactly once per subscription.
     */
    public Mono<Void> put(byte[] key, LongFunction<Record> version, ReplicationFactor factor, Placement placement,
            Runnable afterLastReplica) {
        return write(key, version.apply(clock.now()), factor, placement, afterLastReplica);
    }

    public Mono<Void> delete(byte[] key, ReplicationFactor factor, Placement placement) {
        return write(key, Record.tombstone(clock.now()), factor, placement, () -> { });
    }

    private Mono<Void> write(byte[] key, Record record, ReplicationFactor factor, Placement placement, Runnable afterLastReplica) {
        List<Replica> targets = placement.writeReplicas(key, factor.from());
        ReplicationFactor served = placement.served(factor);
        // Only the current owners count towards ack: they are the ones reads ask, and the targets' first.
        List<Replica> counted = targets.subList(0, served.from());
        // Every target is asked at once: no hedging for writes. The answer waits until every
        // target's call has its place in that replica's window: a replica that falls behind slows
        // this write's client instead of piling up calls it would refuse.
        return quorum(targets, targets.size(), Duration.ZERO, served, counted::contains, Pacing.write(record.valueLength()),
                replica -> replica.write(key, record).doOnError(error -> hint(replica, key, record)),
                ignored -> { }, afterLastReplica)
                .then();
    }

    /** A write of the record to the replica, within its window (not pacing anything). */
    private static <T> Mono<T> windowed(Replica replica, Record record, Supplier<Mono<T>> write) {
        return replica.window().call(record.valueLength(), ReplicaWindow.Lane.FOREGROUND, write);
    }

    /**
     * How a round's calls use the replicas' windows: the bytes of value each carries, and whether
     * the answer waits until every call has its place (writes: a replica that falls behind slows
     * the client) or not (reads, which ask only the replicas they need).
     */
    private record Pacing(long valueBytes, boolean answerOnceAllAdmitted) {
        static final Pacing READ = new Pacing(0, false);

        static Pacing write(long valueBytes) {
            return new Pacing(valueBytes, true);
        }
    }

    /** A peer missed the write: keep it for that peer. */
    private void hint(Replica replica, byte[] key, Record record) {
        if (replica instanceof RemoteReplica) {
            hints.hint(replica.name(), key, record);
        }
    }

    private static Counter replicaReads(String zone, MeterRegistry meters) {
        return Counter.builder("ringkv.replica.reads").tag("zone", zone)
                .description("Replica reads a coordinator asked, by whether the replica is in its zone (same without zones)")
                .register(meters);
    }

    /** Counts a replica read by whether it stays in this node's zone: what local-zone reads save. */
    private Replica asked(Replica replica, Placement placement) {
        (placement.inThisZone(replica) ? readsInZone : readsAcrossZones).increment();
        return replica;
    }

    /**
     * The newest live record among the first {@code ack} answers; empty if that is a tombstone or nothing.
     *
     * @param hold the read's hold on this node's bytes in flight: each replica's value is held as
     *             it arrives ({@link AdmissionControl.Held#tryAddAnswer}; no room fails the read with
     *             {@link OverloadedException}), for as long as anything here keeps it: the answer
     *             to the client, replica calls still running, background repairs. A burst of reads
     *             of large values must not gather more of them than the heap holds; bytes given
     *             back while a slower replica's call still kept them escaped the bound.
     */
    public Mono<Optional<Record>> get(byte[] key, ReplicationFactor factor, Placement placement, AdmissionControl.Held hold) {
        List<Replica> targets = ReplicaPreference.cheapestFirst(
                placement.readReplicas(key, factor.from()), Replica::expectedLatencyMillis, placement::inThisZone);
        int first = readHedgeDelay.isZero() ? targets.size() : factor.ack();
        if (first == 1 && targets.get(0) instanceof LocalReplica local) {
            Mono<Optional<Record>> answered = answeredFromMemory(local, key, hold);
            if (answered != null) {
                readsInZone.increment();
                return answered;
            }
        }
        LateAnswers late = new LateAnswers(key, hold);
        return Mono.defer(() -> {
                    hold.retain(); // for the replica calls, let go after the last has ended
                    return quorum(targets, first, readHedgeDelay, placement.served(factor), replica -> true, Pacing.READ,
                            replica -> asked(replica, placement).read(key).flatMap(answer -> observed(replica, answer))
                                    .flatMap(answer -> held(answer, hold))
                                    .map(answer -> new ReadRepair.Answer<>(replica, answer)),
                            late, hold::release);
                })
                .flatMap(answers -> {
                    ReadRepair.Plan<Replica> plan = ReadRepair.plan(answers);
                    late.decided(answers, plan.stale());
                    Mono<Void> repaired = plan.needed() ? repair(key, plan) : Mono.empty();
                    return repaired.thenReturn(liveValue(plan.newest()));
                });
    }

    /**
     * A read that this node's own replica decides alone (the one replica asked first, at ack 1),
     * answered at once when the record is in memory; null when it is not, or when the clock
     * would refuse its timestamp (the round then counts that as the replica's failure). A round
     * of calls would come to the same answer: its one call answers before any hedge or deadline,
     * there can be no late answers, and one answer needs no repair; the round only adds
     * operators and a timer.
     */
    private Mono<Optional<Record>> answeredFromMemory(LocalReplica local, byte[] key, AdmissionControl.Held hold) {
        RocksStore.Lookup inMemory = local.readFromMemory(key);
        if (!inMemory.known()) {
            return null;
        }
        Optional<Record> answer = inMemory.found();
        if (answer.isPresent()) {
            if (!clock.accepts(answer.get().timestamp())) {
                return null;
            }
            clock.observe(answer.get().timestamp());
        }
        return held(answer, hold).map(this::liveValue);
    }

    /** The record a client gets: none for a tombstone, a value expired by now, or no record. */
    private Optional<Record> liveValue(Optional<Record> newest) {
        long now = clock.physicalNow();
        return newest.filter(record -> record.liveAt(now));
    }

    private static Mono<Optional<Record>> held(Optional<Record> answer, AdmissionControl.Held hold) {
        if (answer.isPresent() && !hold.tryAddAnswer(answer.get().valueLength())) {
            return Mono.error(OverloadedException.bytesInFlight());
        }
        return Mono.just(answer);
    }

    /** A replica's answer, unless it carries a timestamp too far ahead of this clock: then a failure. */
    private Mono<Optional<Record>> observed(Replica replica, Optional<Record> answer) {
        if (answer.isPresent() && !clock.observe(answer.get().timestamp())) {
            return Mono.error(new IllegalStateException(replica.name() + " answered with a timestamp beyond ringkv.clock.max-offset"));
        }
        return Mono.just(answer);
    }

    /**
     * Writes the newest version back to the stale replicas and waits for them (within the
     * request's time): the answer goes out only once a repeat read cannot see an older version.
     */
    private Mono<Void> repair(byte[] key, ReadRepair.Plan<Replica> plan) {
        Record newest = plan.newest().orElseThrow();
        return Flux.fromIterable(plan.stale())
                .flatMap(replica -> windowed(replica, newest, () -> replica.write(key, newest))
                        .doOnSuccess(ignored -> blockingRepairs.increment())
                        .onErrorResume(error -> {
                            hint(replica, key, newest);
                            return Mono.empty();
                        }))
                .then()
                .timeout(timeout, Mono.empty());
    }

    /**
     * Answers that come after a read was decided: a stale one is repaired in the background, and
     * one newer than what was decided (the answer has gone out) repairs the replicas that answered
     * in time. Bounded: past {@value #BACKGROUND_REPAIRS} at once, anti-entropy catches up later.
     * Each repair keeps the read's hold until it ends, since it keeps the value.
     */
    private final class LateAnswers implements Consumer<ReadRepair.Answer<Replica>> {
        private final byte[] key;
        private final AdmissionControl.Held hold;
        private final List<ReadRepair.Answer<Replica>> heard = new ArrayList<>();
        private final List<ReadRepair.Answer<Replica>> waiting = new ArrayList<>();
        private final Set<Replica> repaired = new HashSet<>();
        private boolean decided;

        LateAnswers(byte[] key, AdmissionControl.Held hold) {
            this.key = key;
            this.hold = hold;
        }

        /** The answers the read was decided on, whose stale replicas it repairs itself. */
        synchronized void decided(List<ReadRepair.Answer<Replica>> answers, List<Replica> repairedBeforeAnswer) {
            decided = true;
            heard.addAll(answers);
            repaired.addAll(repairedBeforeAnswer);
            waiting.forEach(this::repairLate);
            waiting.clear();
        }

        @Override
        public synchronized void accept(ReadRepair.Answer<Replica> answer) {
            if (decided) {
                repairLate(answer);
            } else {
                waiting.add(answer);
            }
        }

        private void repairLate(ReadRepair.Answer<Replica> answer) {
            heard.add(answer);
            ReadRepair.Plan<Replica> plan = ReadRepair.plan(heard);
            for (Replica stale : plan.stale()) {
                if (repaired.add(stale) && backgroundRepairs.tryAcquire()) {
                    Record newest = plan.newest().orElseThrow();
                    hold.retain();
                    counted(windowed(stale, newest, () -> stale.write(key, newest)))
                            .doFinally(signal -> {
                                backgroundRepairs.release();
                                hold.release();
                            })
                            .subscribe(ignored -> lateRepairs.increment(), error -> hint(stale, key, newest));
                }
            }
        }
    }

    /**
     * The live records of the whole cluster in {@code [start, end)}, in key order: a k-way merge of
     * every member's sorted stream that keeps the newest version of each key and drops tombstones
     * and values expired by the time they are merged.
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
                .filter(keyed -> keyed.record().liveAt(clock.physicalNow()));
    }

    /**
     * Calls the first {@code initial} targets in parallel, one more target for each that fails,
     * and all the rest once {@code hedgeDelay} (unless zero) passes undecided. Emits the first
     * {@code ack} answers of the targets that count, or fails with
     * {@link NotEnoughReplicasException} once {@code ack} can no longer be reached or the timeout
     * passes. Answers after the decision go to {@code late}. Runs {@code afterLastCall} once the
     * request has ended and every call it made has ended too, exactly once per subscription.
     */
    private <T> Mono<List<T>> quorum(List<Replica> targets, int initial, Duration hedgeDelay, ReplicationFactor factor,
            Predicate<Replica> counts, Pacing pacing, Function<Replica, Mono<T>> call, Consumer<T> late, Runnable afterLastCall) {
        return Mono.create(sink -> {
            Round<T> round = new Round<>(targets, factor, counts, pacing, call, sink, late, afterLastCall);
            Disposable deadline = Deadlines.after(timeout, round::expire);
            Disposable hedge = hedgeDelay.isZero() || initial >= targets.size()
                    ? null
                    : Deadlines.after(hedgeDelay, () -> round.ask(targets.size()));
            sink.onDispose(() -> {
                deadline.dispose();
                if (hedge != null) {
                    hedge.dispose();
                }
                round.requestEnded();
            });
            round.askFirst(initial);
        });
    }

    /**
     * The calls of one request to its replicas, asked in the targets' order, each at most once.
     * It ends once its request has ended and then its last call: slower replicas' calls outlive
     * the answer, and keep what they carry.
     */
    private final class Round<T> {

        private final List<Replica> targets;
        private final ReplicationFactor factor;
        private final Predicate<Replica> counts;
        private final Pacing pacing;
        private final Function<Replica, Mono<T>> call;
        private final MonoSink<List<T>> sink;
        private final Consumer<T> late;
        private final QuorumCollector<T> collector;
        private final AtomicInteger asked = new AtomicInteger();
        /** The calls still running, plus one for the request itself until it has ended; at zero the round is over. */
        private final AtomicInteger running = new AtomicInteger(1);
        private final Runnable afterLastCall;
        /** Calls asked that have no place in their replica's window yet (plus one while asking): a paced answer waits for them. */
        private final AtomicInteger unadmitted = new AtomicInteger();
        /** ack was reached while some call still waited for its place: the last one to get it answers. */
        private volatile boolean reachedWhileUnadmitted;
        private final AtomicBoolean answered = new AtomicBoolean();

        Round(List<Replica> targets, ReplicationFactor factor, Predicate<Replica> counts, Pacing pacing,
                Function<Replica, Mono<T>> call, MonoSink<List<T>> sink, Consumer<T> late, Runnable afterLastCall) {
            this.targets = targets;
            this.factor = factor;
            this.counts = counts;
            this.pacing = pacing;
            this.call = call;
            this.sink = sink;
            this.late = late;
            this.afterLastCall = afterLastCall;
            this.collector = new QuorumCollector<>(factor);
        }

        /** The request has its answer, or its failure, or its client left: no replica is asked any more. */
        void requestEnded() {
            collector.abandon();
            ended();
        }

        /**
         * Asks the first {@code count} targets, every one of them even if the request ends on the
         * way (an answer from memory can decide it at once): a write must reach all its targets.
         */
        void askFirst(int count) {
            running.incrementAndGet(); // the asking itself: the round cannot end halfway through it
            unadmitted.incrementAndGet(); // nor be answered before every first call is asked
            try {
                ask(count);
            } finally {
                admittedOne();
                ended();
            }
        }

        /** ack was reached: answered now, or, paced, once every call asked has its place. */
        private void reached() {
            if (pacing.answerOnceAllAdmitted() && unadmitted.get() > 0) {
                reachedWhileUnadmitted = true;
                if (unadmitted.get() > 0) {
                    return;
                }
            }
            answer();
        }

        /** Counts a call that waits for its place until it gets one, or ends without (then it holds nothing back). */
        private Runnable admission() {
            unadmitted.incrementAndGet();
            AtomicBoolean admitted = new AtomicBoolean();
            return () -> {
                if (admitted.compareAndSet(false, true)) {
                    admittedOne();
                }
            };
        }

        private void admittedOne() {
            if (unadmitted.decrementAndGet() == 0 && reachedWhileUnadmitted) {
                answer();
            }
        }

        private void answer() {
            if (answered.compareAndSet(false, true)) {
                sink.success(collector.answers());
            }
        }

        /** Counts one more call; false once the round is over, when nothing may start any more. */
        private boolean started() {
            int now;
            do {
                now = running.get();
                if (now == 0) {
                    return false;
                }
            } while (!running.compareAndSet(now, now + 1));
            return true;
        }

        private void ended() {
            if (running.decrementAndGet() == 0) {
                afterLastCall.run();
            }
        }

        void expire() {
            if (collector.expire() == QuorumCollector.Outcome.FAILED) {
                sink.error(new NotEnoughReplicasException(
                        "fewer than " + factor.ack() + " of " + factor.from() + " replicas answered within " + timeout));
            } else if (reachedWhileUnadmitted) {
                // ack was reached: a replica's full window holds the client back no longer than the timeout.
                answer();
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
            if (!started()) {
                return;
            }
            boolean counted = counts.test(replica);
            Runnable onAdmitted = pacing.answerOnceAllAdmitted() ? admission() : NOTHING;
            // Subscribed on its own: answering the client does not cancel the slower replicas.
            // Each ends by itself: a peer's call times out in its client, a local one in storage.
            // A call that ends without a place (cancelled while it waited) holds no answer back.
            counted(replica.window().call(pacing.valueBytes(), ReplicaWindow.Lane.FOREGROUND, onAdmitted,
                    () -> call.apply(replica)).single())
                    .doFinally(signal -> {
                        onAdmitted.run();
                        ended();
                    })
                    .subscribe(
                            answer -> {
                                if (!counted) {
                                    return;
                                }
                                switch (collector.success(answer)) {
                                    case REACHED -> reached();
                                    case PENDING -> {
                                        if (collector.reached()) {
                                            late.accept(answer);
                                        }
                                    }
                                    default -> { }
                                }
                            },
                            error -> {
                                if (error instanceof OverloadedException) {
                                    // This node's own bound, not the replica's failure: the request ends here.
                                    if (collector.abandon()) {
                                        sink.error(error);
                                    }
                                    return;
                                }
                                log.debug("replica {} failed: {}", replica.name(), error.toString());
                                if (!counted) {
                                    return;
                                }
                                if (collector.failure() == QuorumCollector.Outcome.FAILED) {
                                    sink.error(new NotEnoughReplicasException(
                                            "fewer than " + factor.ack() + " of " + factor.from() + " replicas answered"));
                                } else if (!collector.isDecided()) {
                                    ask(1);
                                }
                            });
        }
    }
}
