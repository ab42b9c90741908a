package io.ringkv.hints;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.function.LongSupplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.ringkv.ledger.RepairLedger;
import io.ringkv.lifecycle.PeriodicTask;
import io.ringkv.overload.Throttle;
import io.ringkv.record.Record;
import io.ringkv.record.RecordCodec;
import io.ringkv.replication.HintedHandoff;
import io.ringkv.replication.RemoteReplica;
import io.ringkv.storage.HintStore;
import io.ringkv.storage.RocksStore;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * Hinted handoff: a write that a peer missed is kept in this node's store, in the {@code hints}
 * column family, and replayed to that peer in order once it takes writes again, throttled. Hints
 * never count towards a write's {@code ack}; they only close the gap sooner than repair would.
 *
 * <p>Each peer's hints are bounded by bytes and by a window counted from its oldest hint (which
 * survives restarts: it is in the hint's key). Past either, its hints are dropped and the peer is
 * marked for a full repair instead ({@link RepairLedger#markForFullRepair}).
 */
public final class Hints extends PeriodicTask implements HintedHandoff {

    private static final Logger log = LoggerFactory.getLogger(Hints.class);
    private static final int PAGE = 256;
    /**
     * Hints replayed to one peer at once. One at a time, replay was a round trip and a delete per
     * hint (4 ms under load with TLS): a peer away for a minute under writes took longer than that to
     * catch up. Order does not matter (each record carries its timestamp; last write wins), and the
     * throttle still bounds the bytes per second.
     */
    private static final int REPLAY_IN_FLIGHT = 16;

    /**
     * @param window     how long a peer may be missing writes before its hints are dropped
     * @param maxBytes   the most hint bytes kept for one peer
     * @param replayRate bytes per second replayed, to all peers together
     */
    public record Settings(Duration window, long maxBytes, long replayRate) {
    }

    /** The peer a hint is for, as its replay needs it. */
    public interface Recipient {

        /** Whether it takes calls now: hints wait for a peer whose breaker is open. */
        boolean isAvailable();

        /** Writes the record the peer missed; fails if the peer does not take it. */
        Mono<Boolean> replay(byte[] key, Record record);

        /** The peer, or null when it is no longer a member. */
        static Recipient of(RemoteReplica remote) {
            return remote == null ? null : new Recipient() {
                @Override
                public boolean isAvailable() {
                    return remote.isAvailable();
                }

                @Override
                public Mono<Boolean> replay(byte[] key, Record record) {
                    return remote.replay(key, record);
                }
            };
        }
    }

    /** One peer's hints, as far as this node knows them. */
    private static final class Target {
        volatile long oldestMillis;
        final AtomicLong bytes = new AtomicLong();
        final AtomicLong count = new AtomicLong();
        volatile boolean overflowed;

        Target(long oldestMillis) {
            this.oldestMillis = oldestMillis;
        }
    }

    private final HintStore store;
    private final Scheduler storage;
    private final Settings settings;
    private final Function<String, Recipient> peers;
    private final RepairLedger ledger;
    private final LongSupplier clock;
    private final Throttle throttle;
    private final Map<String, Target> targets = new ConcurrentHashMap<>();
    private final AtomicLong sequence = new AtomicLong();
    /**
     * The keys of the hints stored since this node started, until {@link #load} has counted those
     * kept from before: the node takes writes meanwhile, and a hint it stored is counted already,
     * so the load, which may find it in the store, skips it. Null once loaded.
     */
    private volatile Set<ByteBuffer> storedBeforeLoad = ConcurrentHashMap.newKeySet();
    private final Counter stored;
    private final Counter replayed;
    private final Counter dropped;

    /**
     * @param peers the peer a hint is for, by name; null when it is no longer a member
     * @param clock wall-clock milliseconds, which the window is measured in
     */
    public Hints(RocksStore store, Scheduler storage, Settings settings, Function<String, Recipient> peers,
            RepairLedger ledger, LongSupplier clock, MeterRegistry meters) {
        this.store = new HintStore(store);
        this.storage = storage;
        this.settings = settings;
        this.peers = peers;
        this.ledger = ledger;
        this.clock = clock;
        this.throttle = Throttle.of(settings.replayRate());
        this.stored = Counter.builder("ringkv.hints.stored").description("Writes a peer missed, kept as hints").register(meters);
        this.replayed = Counter.builder("ringkv.hints.replayed").description("Hints replayed to their peer").register(meters);
        this.dropped = Counter.builder("ringkv.hints.dropped")
                .description("Hints dropped: their peer was away past the window or the byte cap, or storage had no room (it gets a full repair), or left")
                .register(meters);
        Gauge.builder("ringkv.hints.pending", targets, map -> map.values().stream().mapToLong(t -> t.count.get()).sum())
                .description("Hints waiting for their peer").register(meters);
        Gauge.builder("ringkv.hints.pending.bytes", targets, map -> map.values().stream().mapToLong(t -> t.bytes.get()).sum())
                .description("Bytes of hints waiting for their peer").baseUnit("bytes").register(meters);
    }

    /**
     * Keeps a write the peer missed; never blocks. A peer past its window or cap gets no more
     * hints: it gets a full repair instead.
     */
    @Override
    public void hint(String peer, byte[] key, Record record) {
        long now = clock.getAsLong();
        Target target = targets.computeIfAbsent(peer, name -> new Target(now));
        if (target.overflowed) {
            if (ledger.needsFullRepair(peer)) {
                // Still waiting for its repair, which must start after this write to cover it.
                ledger.markForFullRepair(peer, now);
                dropped.increment();
                return;
            }
            synchronized (target) {
                target.overflowed = false;
            }
            log.info("{} had its full repair: it gets hints again", peer);
        }
        if (target.count.get() == 0) {
            // The window counts from the first write missed since the peer last caught up.
            target.oldestMillis = now;
        }
        byte[] encoded = record.encoded();
        byte[] value = ByteBuffer.allocate(2 + key.length + encoded.length).putShort((short) key.length).put(key).put(encoded).array();
        if (now - target.oldestMillis > settings.window().toMillis()
                || target.bytes.get() + value.length > settings.maxBytes()) {
            overflow(peer, target, now);
            dropped.increment();
            return;
        }
        byte[] hintKey = hintKey(peer, nextSequence());
        Set<ByteBuffer> loading = storedBeforeLoad;
        if (loading != null) {
            loading.add(ByteBuffer.wrap(hintKey)); // before the put: a load that finds the hint knows it
        }
        target.bytes.addAndGet(value.length);
        target.count.incrementAndGet();
        stored.increment();
        store.put(hintKey, value).exceptionally(error -> {
            // Storage is full (or closing): the write this hint was for reaches the peer only
            // through a full repair, which must start after it.
            log.debug("a hint for {} could not be stored: {}", peer, error.toString());
            target.bytes.addAndGet(-value.length);
            target.count.decrementAndGet();
            ledger.markForFullRepair(peer, now);
            dropped.increment();
            return false;
        });
    }

    /** Hints waiting now, by peer. */
    public Map<String, Long> pendingByPeer() {
        Map<String, Long> pending = new TreeMap<>();
        targets.forEach((peer, target) -> pending.put(peer, target.count.get()));
        return pending;
    }

    /** The peer has missed too much to catch up from hints: drop them, and repair it in full. */
    private void overflow(String peer, Target target, long now) {
        synchronized (target) {
            if (target.overflowed) {
                return;
            }
            target.overflowed = true;
        }
        ledger.markForFullRepair(peer, now);
        log.warn("{} has missed writes for longer than {} or more than {} bytes of them: its hints are dropped"
                + " and it gets a full repair", peer, settings.window(), settings.maxBytes());
        storage.schedule(() -> dropAll(peer, target));
    }

    /**
     * Storage thread: deletes every hint of the peer. An overflowed peer keeps its (empty) entry,
     * which says it gets no hints until its full repair; one that left loses it.
     */
    private void dropAll(String peer, Target target) {
        byte[] prefix = prefix(peer);
        for (List<byte[][]> page = store.page(prefix, null, PAGE); !page.isEmpty(); page = store.page(prefix, null, PAGE)) {
            for (byte[][] hint : page) {
                store.delete(hint[0]).join();
                dropped.increment();
            }
        }
        target.bytes.set(0);
        target.count.set(0);
        if (!target.overflowed) {
            targets.remove(peer, target);
        }
    }

    /** Strictly increasing, and ordered by time: wall-clock milliseconds in the high bits, then a counter. */
    private long nextSequence() {
        long now = clock.getAsLong() << 20;
        return sequence.updateAndGet(previous -> Math.max(now, previous + 1));
    }

    private static byte[] prefix(String peer) {
        byte[] name = peer.getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(name.length + 1).put(name).put((byte) 0).array();
    }

    private static byte[] hintKey(String peer, long sequence) {
        byte[] prefix = prefix(peer);
        return ByteBuffer.allocate(prefix.length + 8).put(prefix).putLong(sequence).array();
    }

    /** Storage thread, at start: the hints kept from before a restart, and how old each peer's are. */
    private void load() {
        Set<ByteBuffer> countedAlready = storedBeforeLoad;
        Map<String, Long> kept = new TreeMap<>();
        byte[] after = null;
        for (List<byte[][]> page = store.page(new byte[0], null, PAGE); !page.isEmpty(); page = store.page(new byte[0], after, PAGE)) {
            for (byte[][] hint : page) {
                byte[] key = hint[0];
                if (countedAlready.remove(ByteBuffer.wrap(key))) {
                    continue;
                }
                int separator = key.length - 9;
                String peer = new String(key, 0, separator, StandardCharsets.UTF_8);
                long millis = ByteBuffer.wrap(key, separator + 1, 8).getLong() >>> 20;
                Target target = targets.computeIfAbsent(peer, name -> new Target(millis));
                target.oldestMillis = Math.min(target.oldestMillis, millis);
                target.bytes.addAndGet(hint[1].length);
                target.count.incrementAndGet();
                kept.merge(peer, 1L, Long::sum);
            }
            after = page.get(page.size() - 1)[0];
        }
        storedBeforeLoad = null;
        if (!kept.isEmpty()) {
            log.info("hints kept from before the restart, by peer: {}", kept);
        }
    }

    /** One round: each peer with hints that takes calls gets them, oldest first, until one fails. */
    Mono<Void> replayRound() {
        return Flux.fromIterable(List.copyOf(targets.keySet()))
                .concatMap(this::replayTo)
                .then();
    }

    private Mono<Void> replayTo(String name) {
        Target target = targets.get(name);
        if (target == null || target.overflowed || target.count.get() == 0) {
            return Mono.empty();
        }
        Recipient peer = peers.apply(name);
        if (peer == null) {
            log.info("dropping {} hints for {}: it is no longer a member", target.count.get(), name);
            return Mono.fromRunnable(() -> dropAll(name, target)).subscribeOn(storage).then();
        }
        if (!peer.isAvailable()) {
            return Mono.empty();
        }
        byte[] prefix = prefix(name);
        // The first failure stops taking hints, but lets the replays in flight finish: one cancelled
        // between its delete and its count stayed "pending" for ever, and one whose delete was not
        // yet done was replayed again, and counted twice, by the next round.
        AtomicReference<Throwable> failure = new AtomicReference<>();
        // Page after page until none is left: each page starts after the last hint replayed.
        return Mono.fromCallable(() -> store.page(prefix, null, PAGE))
                .subscribeOn(storage)
                .expand(page -> page.size() < PAGE ? Mono.empty()
                        : Mono.fromCallable(() -> store.page(prefix, page.get(page.size() - 1)[0], PAGE)).subscribeOn(storage))
                .concatMapIterable(page -> page)
                .takeWhile(hint -> failure.get() == null)
                .flatMap(hint -> replay(peer, target, hint).onErrorResume(error -> {
                    failure.compareAndSet(null, error);
                    return Mono.empty();
                }), REPLAY_IN_FLIGHT)
                .then(Mono.fromRunnable(() -> {
                    if (failure.get() != null) {
                        log.debug("replaying hints to {} stopped: {}", name, failure.get().toString());
                    }
                }))
                .onErrorResume(error -> {
                    log.debug("reading the hints for {} failed: {}", name, error.toString());
                    return Mono.empty();
                })
                .then();
    }

    /** Replays one hint, throttled, then deletes it. */
    private Mono<Void> replay(Recipient peer, Target target, byte[][] hint) {
        ByteBuffer value = ByteBuffer.wrap(hint[1]);
        byte[] key = new byte[value.getShort() & 0xffff];
        value.get(key);
        byte[] encoded = new byte[value.remaining()];
        value.get(encoded);
        Duration wait = throttle.reserve(hint[1].length);
        return Mono.delay(wait)
                .then(Mono.defer(() -> peer.replay(key, RecordCodec.decode(encoded))))
                .then(Mono.fromFuture(() -> store.delete(hint[0])))
                .doOnSuccess(ignored -> {
                    target.bytes.addAndGet(-hint[1].length);
                    target.count.decrementAndGet();
                    replayed.increment();
                })
                .then();
    }

    /** Loads the hints kept before a restart, then replays every second; a failure ends the replay, and is logged. */
    @Override
    protected Disposable begin() {
        return Mono.fromRunnable(this::load).subscribeOn(storage)
                .thenMany(Flux.interval(Duration.ofSeconds(1)).onBackpressureDrop().concatMap(tick -> replayRound(), 1))
                .subscribe(null, error -> log.error("hint replay stopped", error));
    }
}
