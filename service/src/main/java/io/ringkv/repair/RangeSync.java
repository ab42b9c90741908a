package io.ringkv.repair;

import java.util.ArrayList;
import java.util.List;
import java.util.function.LongConsumer;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.ringkv.replication.HybridClock;
import io.ringkv.replication.LocalReplica;
import io.ringkv.replication.RemoteReplica;
import io.ringkv.replication.Replica;
import io.ringkv.ring.TokenRange.Interval;
import io.ringkv.storage.KeyedRecord;
import io.ringkv.storage.RecordCodec;
import io.ringkv.storage.RecordCursor;
import io.ringkv.storage.RocksStore;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * Brings this node and one peer to the same versions over some token intervals, moving only the
 * keys that differ: the engine of anti-entropy repair, of a joining node's pull and of a leaving
 * node's push.
 *
 * <p>Both sides hash their versions per interval (an XOR of one hash per key and version, from
 * the token index, so it is cheap to compute on demand, like Cassandra's validation); equal
 * digests end the work for that interval. A differing interval with many keys is split in
 * {@value #SPLIT} and compared again, a Merkle tree walked top-down without being stored; one
 * with few keys is settled by streaming both sides' versions (keys and timestamps, no values)
 * and moving the newer record of each key that differs. Moves are throttled in bytes per
 * second; pulled records pass the same clock check as any write from a peer.
 */
public final class RangeSync {

    /** Which way records may move. */
    public enum Direction {
        /** Only fetch what the peer holds newer: a joining node. */
        PULL,
        /** Only send what this node holds newer: a leaving node. */
        PUSH,
        /** Both: repair. */
        BOTH;

        boolean pulls() {
            return this != PUSH;
        }

        boolean pushes() {
            return this != PULL;
        }
    }

    static final int SPLIT = 16;
    /** An interval with at most this many keys on each side is settled key by key. */
    static final int LEAF_KEYS = 1000;
    /** 16^8 splits of the ring leave 2^32 tokens an interval: deeper only repeats the leaf's work. */
    static final int MAX_DEPTH = 8;
    /** Intervals per DIGEST request: bounds a frame at a few KiB. */
    static final int DIGEST_BATCH = 256;
    /** Records in flight to or from the peer at once. */
    static final int TRANSFERS = 8;

    private final LocalReplica local;
    private final RocksStore store;
    private final Scheduler storage;
    private final HybridClock clock;
    private final Throttle throttle;
    private final Counter intervalsCompared;
    private final Counter keysPushed;
    private final Counter keysPulled;
    private final Counter bytesPushed;
    private final Counter bytesPulled;
    private final Counter refused;

    public RangeSync(LocalReplica local, RocksStore store, Scheduler storage, HybridClock clock, Throttle throttle,
            MeterRegistry meters) {
        this.local = local;
        this.store = store;
        this.storage = storage;
        this.clock = clock;
        this.throttle = throttle;
        this.intervalsCompared = Counter.builder("ringkv.repair.intervals").description("Token intervals compared by digest")
                .register(meters);
        this.keysPushed = Counter.builder("ringkv.repair.keys").tag("direction", "push")
                .description("Keys found different and moved, by repair, join or leave").register(meters);
        this.keysPulled = Counter.builder("ringkv.repair.keys").tag("direction", "pull")
                .description("Keys found different and moved, by repair, join or leave").register(meters);
        this.bytesPushed = Counter.builder("ringkv.repair.bytes").tag("direction", "push").baseUnit("bytes")
                .description("Record bytes moved by repair, join or leave").register(meters);
        this.bytesPulled = Counter.builder("ringkv.repair.bytes").tag("direction", "pull").baseUnit("bytes")
                .description("Record bytes moved by repair, join or leave").register(meters);
        this.refused = Counter.builder("ringkv.repair.refused")
                .description("Records repair did not move: stamped beyond ringkv.clock.max-offset ahead of this clock").register(meters);
    }

    /** Settles the intervals with the peer; fails, leaving the rest for another run, if either side fails. */
    public Mono<Void> sync(RemoteReplica peer, List<Interval> intervals, Direction direction, RepairProgress progress) {
        return compare(peer, intervals, 0, direction, progress);
    }

    private Mono<Void> compare(RemoteReplica peer, List<Interval> intervals, int depth, Direction direction,
            RepairProgress progress) {
        return Flux.fromIterable(batches(intervals))
                .concatMap(batch -> Mono.zip(localDigests(batch), peer.digest(TokenIntervals.flatten(batch)))
                        .flatMapMany(digests -> {
                            long[] mine = digests.getT1();
                            long[] theirs = digests.getT2();
                            if (mine.length != theirs.length) {
                                return Flux.error(new IllegalStateException(
                                        peer.name() + " answered " + theirs.length / 2 + " digests for " + batch.size() + " intervals"));
                            }
                            intervalsCompared.increment(batch.size());
                            List<Mono<Void>> work = new ArrayList<>();
                            for (int i = 0; i < batch.size(); i++) {
                                Interval interval = batch.get(i);
                                long myKeys = mine[2 * i + 1];
                                long theirKeys = theirs[2 * i + 1];
                                if (mine[2 * i] == theirs[2 * i] && myKeys == theirKeys) {
                                    progress.compared(interval);
                                } else if (depth >= MAX_DEPTH || Math.max(myKeys, theirKeys) <= LEAF_KEYS) {
                                    work.add(settle(peer, interval, direction, progress));
                                } else {
                                    work.add(compare(peer, TokenIntervals.split(interval, SPLIT), depth + 1, direction, progress));
                                }
                            }
                            return Flux.concat(work);
                        }), 1)
                .then();
    }

    private static List<List<Interval>> batches(List<Interval> intervals) {
        List<List<Interval>> batches = new ArrayList<>();
        for (int from = 0; from < intervals.size(); from += DIGEST_BATCH) {
            batches.add(intervals.subList(from, Math.min(intervals.size(), from + DIGEST_BATCH)));
        }
        return batches;
    }

    private Mono<long[]> localDigests(List<Interval> intervals) {
        return Mono.fromCallable(() -> store.digests(TokenIntervals.flatten(intervals))).subscribeOn(storage);
    }

    /** Compares both sides' versions in the interval and moves the newer record of every key that differs. */
    private Mono<Void> settle(RemoteReplica peer, Interval interval, Direction direction, RepairProgress progress) {
        return Mono.zip(localVersions(interval), peer.tokenScan(interval.low(), interval.high()).collectList())
                .flatMap(versions -> {
                    VersionDiff.Result diff = VersionDiff.of(versions.getT1(), versions.getT2());
                    progress.different(diff.size());
                    Flux<Void> pushes = direction.pushes()
                            ? Flux.fromIterable(diff.push()).flatMap(key -> push(peer, key, progress), TRANSFERS)
                            : Flux.empty();
                    Flux<Void> pulls = direction.pulls()
                            ? Flux.fromIterable(diff.pull()).flatMap(key -> pull(peer, key, progress), TRANSFERS)
                            : Flux.empty();
                    return pushes.thenMany(pulls).then();
                })
                .doOnSuccess(ignored -> progress.compared(interval));
    }

    private Mono<List<KeyedRecord>> localVersions(Interval interval) {
        return Mono.fromCallable(() -> {
            List<KeyedRecord> versions = new ArrayList<>();
            try (RecordCursor cursor = store.openTokenRange(interval.low(), interval.high())) {
                for (KeyedRecord next = cursor.next(); next != null; next = cursor.next()) {
                    versions.add(next);
                }
            }
            return versions;
        }).subscribeOn(storage);
    }

    private Mono<Void> push(RemoteReplica peer, byte[] key, RepairProgress progress) {
        return copy(local, peer, key, keysPushed, bytesPushed, progress::pushed);
    }

    private Mono<Void> pull(RemoteReplica peer, byte[] key, RepairProgress progress) {
        return copy(peer, local, key, keysPulled, bytesPulled, progress::pulled);
    }

    /**
     * Reads the key's record on one side and writes it on the other, paced by the throttle. A
     * record stamped beyond ringkv.clock.max-offset is not moved (and counted): the clock refuses it.
     */
    private Mono<Void> copy(Replica source, Replica target, byte[] key, Counter keys, Counter bytes, LongConsumer progress) {
        return source.read(key)
                .flatMap(found -> {
                    if (found.isEmpty()) {
                        return Mono.empty();
                    }
                    if (!clock.observe(found.get().timestamp())) {
                        refused.increment();
                        return Mono.empty();
                    }
                    long size = key.length + RecordCodec.HEADER_SIZE + found.get().value().length;
                    return Mono.delay(throttle.reserve(size))
                            .then(target.write(key, found.get()))
                            .doOnSuccess(ignored -> {
                                keys.increment();
                                bytes.increment(size);
                                progress.accept(size);
                            });
                })
                .then();
    }
}
