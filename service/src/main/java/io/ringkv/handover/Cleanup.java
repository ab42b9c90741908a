package io.ringkv.handover;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.stream.Stream;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.ringkv.repair.RangeSync;
import io.ringkv.repair.RepairProgress;
import io.ringkv.repair.TokenIntervals;
import io.ringkv.record.KeyedRecord;
import io.ringkv.replication.RemoteReplica;
import io.ringkv.ring.ClusterMembership;
import io.ringkv.ring.HashRing;
import io.ringkv.ring.MemberState;
import io.ringkv.ring.TokenRange.Interval;
import io.ringkv.storage.RecordCursor;
import io.ringkv.storage.RocksStore;
import io.ringkv.storage.TokenIndex;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * Drops what this node keeps for ranges it no longer owns: after nodes joined, the old owners
 * still hold copies nobody reads, which cost disk, and which a range read would still merge once
 * the owners have purged a tombstone that covers them. Run on request, as Cassandra's
 * {@code nodetool cleanup}, or by {@link AutomaticCleanup} once the ring has settled, and never
 * while data moves: dropping is only safe when the ring every node uses is the one this node
 * computes from.
 *
 * <p>Before it drops anything it pushes to each owner of those ranges whatever it holds newer
 * ({@link RangeSync}, as a leaving node does), and drops nothing unless every owner took it: the
 * copy may be the only one of a write acknowledged by few replicas, or the owner may be a member
 * that a static peer list gained and repair has not filled yet. A record is dropped only if it is
 * still the version seen (a write that arrives meanwhile stays); if the ring changes halfway, it
 * stops.
 */
public final class Cleanup {

    private static final Logger log = LoggerFactory.getLogger(Cleanup.class);
    /** Keys read from the token index and dropped per round trip to the writer. */
    private static final int PAGE = 512;

    /** A cleanup asked for through the endpoint. */
    static final String REQUEST = "request";
    /** A cleanup this node started by itself once its ring had settled. */
    static final String AUTOMATIC = "automatic";

    /**
     * Where the last or current cleanup stands, and what started it ({@link #REQUEST} or
     * {@link #AUTOMATIC}); {@code keysHandedOver}: records the owners lacked, pushed to them first.
     */
    public record Status(String state, String trigger, long keysHandedOver, long keysScanned, long keysDropped, Instant started,
            Instant ended, String reason) {
        static final Status NEVER = new Status("never", null, 0, 0, 0, null, null, null);

        boolean running() {
            return state.equals("running");
        }
    }

    private final RocksStore store;
    private final TokenIndex tokens;
    private final Scheduler storage;
    private final ClusterMembership membership;
    private final int replicationFactor;
    private final RangeSync sync;
    private final Function<String, RemoteReplica> peers;
    private final AtomicLong handedOver = new AtomicLong();
    private final AtomicLong scanned = new AtomicLong();
    private final AtomicLong dropped = new AtomicLong();
    private volatile Status status = Status.NEVER;
    /** The view the last or current cleanup dropped by. */
    private volatile ClusterMembership.View ranOn;

    /** @param peers a peer's replica by its name on the ring; null if this node does not call it */
    public Cleanup(RocksStore store, Scheduler storage, ClusterMembership membership, int replicationFactor, RangeSync sync,
            Function<String, RemoteReplica> peers) {
        this.store = store;
        this.tokens = new TokenIndex(store);
        this.storage = storage;
        this.membership = membership;
        this.replicationFactor = replicationFactor;
        this.sync = sync;
        this.peers = peers;
    }

    public Status status() {
        Status now = status;
        return now.running()
                ? new Status(now.state(), now.trigger(), handedOver.get(), scanned.get(), dropped.get(), now.started(), null, null)
                : now;
    }

    /** Whether the last cleanup completed on this very view (states included): it left nothing more to drop by it. */
    boolean doneOn(ClusterMembership.View view) {
        return ranOn == view && status.state().equals("done");
    }

    /**
     * Starts a cleanup on a storage thread, asked for through the endpoint.
     *
     * @throws IllegalStateException when one runs already, or the ring is not settled (members
     *                               joining or leaving, or this node not NORMAL)
     */
    public Status start() {
        return start(REQUEST, membership.view());
    }

    /**
     * Starts a cleanup this node decided on by itself, by the view it saw settle: a view that
     * changed since has not settled, whatever it is.
     *
     * @throws IllegalStateException as {@link #start()}, or when the view is no longer this node's
     */
    Status startAutomatically(ClusterMembership.View settled) {
        return start(AUTOMATIC, settled);
    }

    private synchronized Status start(String trigger, ClusterMembership.View view) {
        if (status.running()) {
            throw new IllegalStateException("a cleanup is running already");
        }
        if (membership.view() != view) {
            throw new IllegalStateException("the ring changed as it started: run it again once it has settled");
        }
        Optional<String> notNow = whyNotNow(membership.isKnown(), membership.state(membership.self()), view);
        if (notNow.isPresent()) {
            throw new IllegalStateException(notNow.get());
        }
        List<Interval> leftovers = leftovers(view);
        handedOver.set(0);
        scanned.set(0);
        dropped.set(0);
        ranOn = view;
        status = new Status("running", trigger, 0, 0, 0, Instant.now(), null, null);
        log.info("cleanup ({}): handing over, then dropping, what this node keeps in {} token intervals it no longer owns",
                trigger, leftovers.size());
        long startedNanos = System.nanoTime();
        handOver(view)
                .then(Mono.fromRunnable(() -> run(view, leftovers, startedNanos)).subscribeOn(storage))
                .subscribe(null, error -> finish("failed", error.getMessage(), startedNanos));
        return status();
    }

    /**
     * Pushes to each owner of the leftovers what this node holds newer, one owner at a time; fails,
     * so that nothing is dropped, if an owner cannot be reached or the push fails.
     */
    private Mono<Void> handOver(ClusterMembership.View view) {
        List<HashRing> rings = rings(view);
        String self = membership.self();
        return Flux.fromIterable(view.ring().names())
                .filter(owner -> !owner.equals(self))
                .concatMap(owner -> {
                    List<Interval> intervals = TokenIntervals.leftoversOwnedBy(rings, replicationFactor, self, view.ring(), owner);
                    if (intervals.isEmpty()) {
                        return Mono.empty();
                    }
                    RemoteReplica peer = peers.apply(owner);
                    if (peer == null || !peer.isAvailable()) {
                        return Mono.error(new IllegalStateException(owner + " is not reachable: nothing is dropped before every"
                                + " owner holds what this node keeps for it"));
                    }
                    RepairProgress progress = new RepairProgress("cleanup", owner, System.currentTimeMillis(), intervals);
                    return sync.sync(peer, intervals, RangeSync.Direction.PUSH, progress)
                            .doOnSuccess(ignored -> handedOver.addAndGet(progress.snapshot().keysPushed()));
                })
                .then();
    }

    /**
     * Why dropping by {@code view} is not safe now, if it is not: data moves while this node does
     * not know its ring, is not NORMAL, or members join or leave.
     */
    static Optional<String> whyNotNow(boolean ringKnown, MemberState selfState, ClusterMembership.View view) {
        if (!ringKnown || selfState != MemberState.NORMAL) {
            return Optional.of("this node is not NORMAL on a known ring yet");
        }
        if (!view.joining().isEmpty() || !view.current().names().equals(view.future().names())) {
            return Optional.of("members are joining or leaving: data is moving; run it once they are done");
        }
        return Optional.empty();
    }

    /** The tokens this node keeps but owns in none of the view's rings: what a cleanup by it drops. */
    List<Interval> leftovers(ClusterMembership.View view) {
        return TokenIntervals.ownedInNone(rings(view), replicationFactor, membership.self());
    }

    private static List<HashRing> rings(ClusterMembership.View view) {
        return Stream.concat(Stream.of(view.ring(), view.current(), view.future()), view.joining().values().stream()).toList();
    }

    /**
     * Storage thread: may wait for the writer. Stops at any change of the view, states included:
     * a member that starts leaving hands this node ranges it did not own when the cleanup began.
     */
    private void run(ClusterMembership.View view, List<Interval> leftovers, long startedNanos) {
        String outcome = "done";
        String reason = null;
        try {
            for (Interval interval : leftovers) {
                if (!dropAll(interval, view)) {
                    outcome = "stopped";
                    reason = "the ring changed while it ran: run it again once it has settled";
                    break;
                }
            }
        } catch (RuntimeException e) {
            outcome = "failed";
            reason = e.toString();
        }
        finish(outcome, reason, startedNanos);
    }

    private void finish(String outcome, String reason, long startedNanos) {
        Duration took = Duration.ofNanos(System.nanoTime() - startedNanos);
        status = new Status(outcome, status.trigger(), handedOver.get(), scanned.get(), dropped.get(), status.started(), Instant.now(),
                reason);
        log.info("cleanup {}: {} keys the owners lacked handed over, {} keys it no longer owns dropped, {} looked at, in {} ms{}",
                outcome, handedOver.get(), dropped.get(), scanned.get(), took.toMillis(), reason == null ? "" : " (" + reason + ")");
    }

    /** Drops the interval's records page by page; false if the ring changed meanwhile (nothing more is dropped). */
    private boolean dropAll(Interval interval, ClusterMembership.View view) {
        try (RecordCursor cursor = tokens.openTokenRange(interval.low(), interval.high())) {
            List<CompletableFuture<Boolean>> page = new ArrayList<>(PAGE);
            for (KeyedRecord keyed = cursor.next(); keyed != null; keyed = cursor.next()) {
                if (membership.view() != view) {
                    awaitPage(page);
                    return false;
                }
                scanned.incrementAndGet();
                page.add(store.removeIfUnchanged(keyed.key(), keyed.record()));
                if (page.size() == PAGE) {
                    awaitPage(page);
                }
            }
            awaitPage(page);
            return true;
        }
    }

    private void awaitPage(List<CompletableFuture<Boolean>> page) {
        for (CompletableFuture<Boolean> removal : page) {
            if (removal.join()) {
                dropped.incrementAndGet();
            }
        }
        page.clear();
    }
}
