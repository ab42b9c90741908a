package io.ringkv.repair;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.LongSupplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.ringkv.ledger.RepairLedger;
import io.ringkv.lifecycle.PeriodicTask;
import io.ringkv.replication.RemoteReplica;
import io.ringkv.replication.ReplicaDirectory;
import io.ringkv.ring.ClusterMembership;
import io.ringkv.ring.HashRing;
import io.ringkv.ring.TokenRange.Interval;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * Anti-entropy repair on a schedule: every {@code interval}, staggered, this node brings each peer
 * to the same versions over every token range both of them hold among a key's first RF owners
 * ({@link RangeSync}, both ways), one peer at a time. A peer marked for a full repair (its hints
 * overflowed) or asked for through the repair endpoint goes first, as soon as it takes calls. A
 * peer still joining is left to its own pull, as this node is while it joins.
 *
 * <p>Each finished repair is recorded on both sides ({@link RepairLedger}, and the peer is told),
 * which is what makes tombstone purging safe: a tombstone goes only once every peer that shares
 * its range has been repaired with this node after the delete ({@code tombstones.PurgeHorizon}).
 */
public final class RepairScheduler extends PeriodicTask {

    private static final Logger log = LoggerFactory.getLogger(RepairScheduler.class);
    /** How often the schedule is looked at: bounds how late a repair asked for starts. */
    private static final Duration TICK = Duration.ofSeconds(2);
    /** A failed repair is tried again after this long, or the interval if that is shorter. */
    private static final Duration RETRY = Duration.ofSeconds(30);
    private static final int RECENT = 20;

    /** What the repair endpoint shows. */
    public record Status(Duration interval, RepairProgress.Snapshot running, List<RepairProgress.Snapshot> recent,
            Map<String, Long> lastRepairMillis, Map<String, Long> nextDueMillis, Set<String> needFullRepair) {
    }

    private final ClusterMembership membership;
    private final ReplicaDirectory replicas;
    private final RangeSync sync;
    private final RepairLedger ledger;
    private final int replicationFactor;
    private final Duration interval;
    private final LongSupplier clock;
    private final MeterRegistry meters;
    private final Map<String, Long> due = new ConcurrentHashMap<>();
    /** After a failed repair, not before: a peer that needs one urgently is not retried every tick. */
    private final Map<String, Long> retryAfter = new ConcurrentHashMap<>();
    private final Set<String> requested = ConcurrentHashMap.newKeySet();
    private final Deque<RepairProgress.Snapshot> recent = new ArrayDeque<>();
    private final Set<String> gauged = ConcurrentHashMap.newKeySet();
    private volatile SharedRanges shared;
    private volatile RepairProgress running;
    private final boolean enabled;

    /** The intervals this node shares with each peer, for one ring. */
    private record SharedRanges(HashRing ring, Map<String, List<Interval>> byPeer) {
    }

    /** @param enabled false: never starts a repair (ringkv.repair.enabled) */
    public RepairScheduler(ClusterMembership membership, ReplicaDirectory replicas, RangeSync sync, RepairLedger ledger,
            int replicationFactor, boolean enabled, Duration interval, LongSupplier clock, MeterRegistry meters) {
        this.enabled = enabled;
        this.membership = membership;
        this.replicas = replicas;
        this.sync = sync;
        this.ledger = ledger;
        this.replicationFactor = replicationFactor;
        this.interval = interval;
        this.clock = clock;
        this.meters = meters;
        ledger.lastRepairs().keySet().forEach(this::gauge);
    }

    /** Asks for a repair with one peer, or every peer (null), as soon as they take calls. */
    public Set<String> requestRepair(String peer) {
        if (!enabled) {
            throw new IllegalArgumentException("repair is off on this node (ringkv.repair.enabled=false)");
        }
        Collection<String> members = peersOf(membership.view().current());
        if (peer != null && !members.contains(peer)) {
            throw new IllegalArgumentException(peer + " is not a peer of this node; its peers are " + members);
        }
        Set<String> peers = peer == null ? Set.copyOf(members) : Set.of(peer);
        requested.addAll(peers);
        return peers;
    }

    public Status status() {
        RepairProgress now = running;
        List<RepairProgress.Snapshot> finished;
        synchronized (recent) {
            finished = List.copyOf(recent);
        }
        Set<String> needed = new TreeSet<>(ledger.peersNeedingRepair());
        needed.addAll(requested);
        return new Status(interval, now == null ? null : now.snapshot(), finished, ledger.lastRepairs(), Map.copyOf(due), needed);
    }

    private Mono<Void> runDue() {
        if (!membership.state(membership.self()).holdsData()) {
            // Joining: its pull (DataMovement) comes first; until then it has nothing to offer.
            return Mono.empty();
        }
        HashRing ring = membership.view().current();
        long now = clock.getAsLong();
        List<String> peers = peersOf(ring).stream()
                // A joining peer pulls from every owner itself: a repair with it meanwhile would send
                // its share a second time (a wiped node got 652,000 of its 1,000,000 keys twice).
                // It is repaired with once it holds data, as it is asked for or falls due.
                .filter(peer -> membership.state(peer).holdsData())
                .filter(peer -> now >= retryAfter.getOrDefault(peer, 0L))
                .filter(peer -> requested.contains(peer) || ledger.needsFullRepair(peer) || now >= dueOf(peer, now))
                .sorted(Comparator.comparing((String peer) -> !requested.contains(peer) && !ledger.needsFullRepair(peer))
                        .thenComparing(peer -> dueOf(peer, now)))
                .toList();
        return Flux.fromIterable(peers).concatMap(peer -> repairIfItHoldsData(peer, ring), 1).then();
    }

    /** The first time, a random moment within the interval (a minute at most): nodes started together do not repair together. */
    private long dueOf(String peer, long now) {
        return due.computeIfAbsent(peer, ignored ->
                now + ThreadLocalRandom.current().nextLong(Math.max(1, Math.min(interval.toMillis(), 60_000))));
    }

    private Mono<Void> repairIfItHoldsData(String name, HashRing ring) {
        RemoteReplica peer = replicas.remote(name);
        if (peer == null || !peer.isAvailable()) {
            return Mono.empty();
        }
        // Its state as it answers now, not as last heard: a node back with an emptied store says
        // JOINING from its first answer, but its peers may not have heard that yet (it may not even
        // have been noticed down), and a repair with it would send it its share a second time.
        return replicas.exchangeStates(name).flatMap(answered -> {
            if (answered.isEmpty()) {
                retryLater(name);
                log.warn("repair with {} not started: it did not answer", name);
                return Mono.empty();
            }
            return membership.state(name).holdsData() ? repair(peer, name, ring) : Mono.empty();
        });
    }

    private Mono<Void> repair(RemoteReplica peer, String name, HashRing ring) {
        List<Interval> intervals = startingAtOwnPoint(sharedRanges(ring).byPeer().getOrDefault(name, List.of()), membership.self(),
                ring.names());
        long started = clock.getAsLong();
        RepairProgress progress = new RepairProgress("repair", name, started, intervals);
        running = progress;
        return sync.sync(peer, intervals, RangeSync.Direction.BOTH, progress)
                .then(peer.repaired(started).onErrorResume(error -> Mono.empty()))
                .doOnSuccess(ignored -> {
                    ledger.repaired(name, started);
                    gauge(name);
                    requested.remove(name);
                    retryAfter.remove(name);
                    long jitter = interval.toMillis() / 10;
                    due.put(name, clock.getAsLong() + interval.toMillis() + ThreadLocalRandom.current().nextLong(-jitter, jitter + 1));
                    progress.finished("done");
                    RepairProgress.Snapshot done = progress.snapshot();
                    if (done.keysDifferent() > 0) {
                        log.info("repaired with {}: {} keys differed; pushed {}, pulled {}, {} bytes, in {} ms", name,
                                done.keysDifferent(), done.keysPushed(), done.keysPulled(), done.bytes(), clock.getAsLong() - started);
                    }
                })
                .onErrorResume(error -> {
                    progress.finished("failed: " + error.getMessage());
                    retryLater(name);
                    log.warn("repair with {} failed, trying again later: {}", name, error.toString());
                    return Mono.empty();
                })
                .doFinally(signal -> {
                    running = null;
                    remember(progress.snapshot());
                });
    }

    private void retryLater(String peer) {
        long retry = clock.getAsLong() + Math.min(interval.toMillis(), RETRY.toMillis());
        due.put(peer, retry);
        retryAfter.put(peer, retry);
    }

    private void remember(RepairProgress.Snapshot snapshot) {
        synchronized (recent) {
            recent.addFirst(snapshot);
            while (recent.size() > RECENT) {
                recent.removeLast();
            }
        }
    }

    private void gauge(String peer) {
        if (gauged.add(peer)) {
            Gauge.builder("ringkv.repair.last.completed", ledger, repairs -> repairs.lastRepairMillis(peer) / 1000.0)
                    .tag("peer", peer).baseUnit("seconds")
                    .description("When the last repair with the peer that finished had started, in seconds since the epoch")
                    .register(meters);
        }
    }

    private Collection<String> peersOf(HashRing ring) {
        return ring.names().stream().filter(member -> !member.equals(membership.self())).toList();
    }

    /** Pieces a repair's ranges are cut into at least, so that members can start at points of their own. */
    static final int START_POINTS = 48;

    /**
     * The intervals in token order, cut into at least {@value #START_POINTS} pieces, from a point
     * of this node's own: the members, in order, start evenly spread around the ring. Peers that
     * repair the same replica at once (both marked it for a full repair when it came back) would
     * otherwise walk its ranges side by side and each send it everything; from different points,
     * each finds equal digests where another has been, and moves nothing there. (With as many
     * members as the replication factor every range is shared: one interval, the whole ring.)
     */
    static List<Interval> startingAtOwnPoint(List<Interval> intervals, String self, List<String> members) {
        List<Interval> pieces = intervals.size() >= START_POINTS ? intervals : intervals.stream()
                .flatMap(interval -> TokenIntervals.split(interval, Math.ceilDiv(START_POINTS, intervals.size())).stream())
                .toList();
        List<String> ordered = members.stream().sorted().toList();
        int index = Math.max(0, ordered.indexOf(self));
        int start = (int) ((long) pieces.size() * index / Math.max(1, ordered.size()));
        List<Interval> rotated = new ArrayList<>(pieces.subList(start, pieces.size()));
        rotated.addAll(pieces.subList(0, start));
        return rotated;
    }

    private SharedRanges sharedRanges(HashRing ring) {
        SharedRanges known = shared;
        if (known != null && known.ring() == ring) {
            return known;
        }
        var pieces = TokenIntervals.cut(ring);
        String self = membership.self();
        Map<String, List<Interval>> byPeer = new ConcurrentHashMap<>();
        for (String peer : peersOf(ring)) {
            byPeer.put(peer, TokenIntervals.where(pieces, piece -> TokenIntervals.owns(ring, replicationFactor, piece, self)
                    && TokenIntervals.owns(ring, replicationFactor, piece, peer)));
        }
        SharedRanges computed = new SharedRanges(ring, byPeer);
        shared = computed;
        return computed;
    }

    @Override
    protected Disposable begin() {
        if (!enabled) {
            log.info("anti-entropy repair is off (ringkv.repair.enabled=false): replicas converge through hints and reads only");
            return null;
        }
        return everyPeriod(TICK, Schedulers.parallel(), this::runDue,
                error -> log.warn("repair round failed: {}", error.toString()))
                .subscribe();
    }
}
