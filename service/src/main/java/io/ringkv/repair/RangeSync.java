package io.ringkv.repair;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.ringkv.overload.Throttle;
import io.ringkv.record.HybridClock;
import io.ringkv.record.KeyedRecord;
import io.ringkv.record.RecordBatch;
import io.ringkv.replication.LocalReplica;
import io.ringkv.replication.RemoteReplica;
import io.ringkv.ring.TokenRange.Interval;
import io.ringkv.storage.RecordCursor;
import io.ringkv.storage.RocksStore;
import io.ringkv.storage.TokenIndex;
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
 * and moving the newer record of each key that differs, many records per call, {@value #SETTLES}
 * intervals at once while the walk goes on. Moves are throttled in bytes per second (and the
 * peer paces what it sends); pulled records pass the same clock check as any write from a peer.
 *
 * <p>Where this node holds next to nothing of what the peer holds (a wiped, replaced or new
 * node), comparing key by key is only overhead: the peer would read every record by its key. A
 * pull then asks the peer for all the records of such intervals in one stream, which the peer
 * serves from one sequential scan of its store, and walks the intervals again afterwards: what
 * was written meanwhile, or is newer here, is settled key by key.
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
    /**
     * Intervals settled at once. One at a time, a pull was bound by round trips, not by either
     * side's disk or CPU: a leaf of a few hundred records took a version scan, a read and a write,
     * each waiting on a peer busy with clients (24.5 MB/s rebuilding a wiped node idle, 34.1 at
     * four). The window to the peer still admits background calls only while clients leave room.
     */
    static final int SETTLES = 4;
    /** Batches of records in flight to or from the peer at once, per interval settled. */
    static final int TRANSFERS = 2;
    /**
     * A pull takes an interval of more than {@value #LEAF_KEYS} keys whole when this node holds
     * less than 1/{@value #WHOLE_SHARE} of the keys the peer holds there.
     */
    static final int WHOLE_SHARE = 10;

    /** What the digest walk found: one interval to settle key by key, or intervals to pull whole. */
    private record Found(List<Interval> intervals, boolean whole) {
    }

    private final LocalReplica local;
    private final TokenIndex tokens;
    private final Scheduler storage;
    private final HybridClock clock;
    private final Throttle throttle;
    private final Counter intervalsCompared;
    private final Counter intervalsPulledWhole;
    private final Counter keysPushed;
    private final Counter keysPulled;
    private final Counter bytesPushed;
    private final Counter bytesPulled;
    private final Counter refused;

    public RangeSync(LocalReplica local, RocksStore store, Scheduler storage, HybridClock clock, Throttle throttle,
            MeterRegistry meters) {
        this.local = local;
        this.tokens = new TokenIndex(store);
        this.storage = storage;
        this.clock = clock;
        this.throttle = throttle;
        this.intervalsCompared = Counter.builder("ringkv.repair.intervals").description("Token intervals compared by digest")
                .register(meters);
        this.intervalsPulledWhole = Counter.builder("ringkv.repair.intervals.whole")
                .description("Token intervals pulled whole, in one stream from the peer: this node held next to none of them")
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
        return walk(peer, intervals, direction, direction.pulls(), progress);
    }

    private Mono<Void> walk(RemoteReplica peer, List<Interval> intervals, Direction direction, boolean pullWhole,
            RepairProgress progress) {
        return differing(peer, intervals, 0, pullWhole, progress)
                .flatMap(found -> found.whole()
                        ? pullWhole(peer, found.intervals(), direction, progress)
                        : settle(peer, found.intervals().getFirst(), direction, progress), SETTLES)
                .then();
    }

    /**
     * The intervals whose records differ, small enough to settle, or (with {@code pullWhole}) held
     * here so sparsely that they are better pulled whole, those of one DIGEST call together: the
     * digest walk, one DIGEST call at a time, run only as far ahead as the settling asks for.
     */
    private Flux<Found> differing(RemoteReplica peer, List<Interval> intervals, int depth, boolean pullWhole,
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
                            List<Flux<Found>> found = new ArrayList<>();
                            List<Interval> whole = new ArrayList<>();
                            for (int i = 0; i < batch.size(); i++) {
                                Interval interval = batch.get(i);
                                long myKeys = mine[2 * i + 1];
                                long theirKeys = theirs[2 * i + 1];
                                if (mine[2 * i] == theirs[2 * i] && myKeys == theirKeys) {
                                    progress.compared(interval);
                                } else if (pullWhole && theirKeys > LEAF_KEYS && myKeys * WHOLE_SHARE < theirKeys) {
                                    whole.add(interval);
                                } else if (depth >= MAX_DEPTH || Math.max(myKeys, theirKeys) <= LEAF_KEYS) {
                                    found.add(Flux.just(new Found(List.of(interval), false)));
                                } else {
                                    found.add(differing(peer, TokenIntervals.split(interval, SPLIT), depth + 1, pullWhole, progress));
                                }
                            }
                            if (!whole.isEmpty()) {
                                found.addFirst(Flux.just(new Found(whole, true)));
                            }
                            return Flux.concat(found);
                        }), 1);
    }

    private static List<List<Interval>> batches(List<Interval> intervals) {
        List<List<Interval>> batches = new ArrayList<>();
        for (int from = 0; from < intervals.size(); from += DIGEST_BATCH) {
            batches.add(intervals.subList(from, Math.min(intervals.size(), from + DIGEST_BATCH)));
        }
        return batches;
    }

    private Mono<long[]> localDigests(List<Interval> intervals) {
        return Mono.fromCallable(() -> tokens.digests(TokenIntervals.flatten(intervals))).subscribeOn(storage);
    }

    /** Compares both sides' versions in the interval and moves the newer record of every key that differs. */
    private Mono<Void> settle(RemoteReplica peer, Interval interval, Direction direction, RepairProgress progress) {
        return Mono.zip(localVersions(interval), peer.tokenScan(interval.low(), interval.high()).collectList())
                .flatMap(versions -> {
                    VersionDiff.Result diff = VersionDiff.of(versions.getT1(), versions.getT2());
                    progress.different(diff.size());
                    Mono<Void> pushes = direction.pushes()
                            ? move(local::readBatch, peer::writeBatch, diff.push(), counted(keysPushed, bytesPushed, progress::pushed))
                            : Mono.empty();
                    Mono<Void> pulls = direction.pulls()
                            ? move(peer::readBatch, local::writeBatch, diff.pull(), counted(keysPulled, bytesPulled, progress::pulled))
                            : Mono.empty();
                    return pushes.then(pulls);
                })
                .doOnSuccess(ignored -> progress.compared(interval));
    }

    private Mono<List<KeyedRecord>> localVersions(Interval interval) {
        return Mono.fromCallable(() -> {
            List<KeyedRecord> versions = new ArrayList<>();
            try (RecordCursor cursor = tokens.openTokenRange(interval.low(), interval.high())) {
                for (KeyedRecord next = cursor.next(); next != null; next = cursor.next()) {
                    versions.add(next);
                }
            }
            return versions;
        }).subscribeOn(storage);
    }

    /**
     * Pulls every record the peer holds in the intervals, in one stream, and writes them here
     * (each kept only if newer than what is held, as every write), {@value #TRANSFERS} batches in
     * flight; then walks the intervals again, key by key where they still differ. A peer that does
     * not know the request is walked key by key at once.
     */
    private Mono<Void> pullWhole(RemoteReplica peer, List<Interval> intervals, Direction direction, RepairProgress progress) {
        Moved moved = counted(keysPulled, bytesPulled, (keys, bytes) -> {
            progress.different(keys);
            progress.pulled(keys, bytes);
        });
        intervalsPulledWhole.increment(intervals.size());
        return inBatches(peer.recordScan(TokenIntervals.flatten(intervals)))
                .flatMap(batch -> store(batch, local::writeBatch, moved), TRANSFERS)
                .then()
                .onErrorResume(RemoteReplica::speaksOlderProtocol, older -> Mono.empty())
                .then(Mono.defer(() -> walk(peer, intervals, direction, false, progress)));
    }

    /** A stream's records in batches of at most a {@link RecordBatch}'s bytes and keys (a larger record alone). */
    static Flux<List<KeyedRecord>> inBatches(Flux<KeyedRecord> records) {
        return Flux.defer(() -> {
            long[] bytes = {0};
            int[] keys = {0};
            return records.bufferUntil(next -> {
                int size = RecordBatch.entrySize(next);
                boolean full = keys[0] > 0 && (bytes[0] + size > RecordBatch.MAX_BYTES || keys[0] == RecordBatch.MAX_KEYS);
                if (full) {
                    bytes[0] = 0;
                    keys[0] = 0;
                }
                bytes[0] += size;
                keys[0]++;
                return full;
            }, true);
        });
    }

    /**
     * Reads the keys' records on one side and writes them on the other, a batch at a time
     * ({@link RecordBatch}: one call and one throttle reservation for many small records), with
     * {@value #TRANSFERS} batches in flight.
     */
    private Mono<Void> move(Function<List<byte[]>, Mono<RecordBatch>> source, Function<List<KeyedRecord>, Mono<Void>> target,
            List<byte[]> keys, Moved moved) {
        return batches(source, keys)
                .flatMap(batch -> store(batch.found(), target, moved), TRANSFERS)
                .then();
    }

    /**
     * Writes a batch of records on one side, within the throttle. A record stamped beyond
     * ringkv.clock.max-offset is not moved (and counted): the clock refuses it.
     */
    private Mono<Void> store(List<KeyedRecord> found, Function<List<KeyedRecord>, Mono<Void>> target, Moved moved) {
        List<KeyedRecord> movable = movable(found);
        if (movable.isEmpty()) {
            return Mono.empty();
        }
        long size = RecordBatch.entrySizes(movable);
        Duration wait = throttle.reserve(size);
        Mono<Void> write = target.apply(movable);
        return (wait.isZero() ? write : Mono.delay(wait).then(write))
                .doOnSuccess(ignored -> moved.accept(movable.size(), size));
    }

    /** The source's batches of the keys, asked for in turn: each answer covers the first of the keys not yet covered. */
    static Flux<RecordBatch> batches(Function<List<byte[]>, Mono<RecordBatch>> source, List<byte[]> keys) {
        return read(source, keys, 0).expand(batch -> batch.covered() < keys.size() ? read(source, keys, batch.covered()) : Mono.empty());
    }

    /** Told of every batch moved. */
    private interface Moved {
        void accept(int keys, long bytes);
    }

    private static Moved counted(Counter keyCounter, Counter byteCounter, Moved progress) {
        return (keys, bytes) -> {
            keyCounter.increment(keys);
            byteCounter.increment(bytes);
            progress.accept(keys, bytes);
        };
    }

    /** One batch from {@code from} on; its {@code covered} counts from the first key of the list. */
    private static Mono<RecordBatch> read(Function<List<byte[]>, Mono<RecordBatch>> source, List<byte[]> keys, int from) {
        if (from >= keys.size()) {
            return Mono.empty();
        }
        List<byte[]> asked = keys.subList(from, Math.min(keys.size(), from + RecordBatch.MAX_KEYS));
        return source.apply(asked).flatMap(batch -> batch.covered() < 1 || batch.covered() > asked.size()
                ? Mono.error(new IllegalStateException("a batch covering " + batch.covered() + " of " + asked.size() + " keys"))
                : Mono.just(new RecordBatch(from + batch.covered(), batch.found())));
    }

    private List<KeyedRecord> movable(List<KeyedRecord> found) {
        List<KeyedRecord> movable = new ArrayList<>(found.size());
        for (KeyedRecord keyed : found) {
            if (clock.observe(keyed.record().timestamp())) {
                movable.add(keyed);
            } else {
                refused.increment();
            }
        }
        return movable;
    }
}
