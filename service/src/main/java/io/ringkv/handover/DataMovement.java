package io.ringkv.handover;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

import io.ringkv.repair.RangeSync;
import io.ringkv.ledger.RepairLedger;
import io.ringkv.repair.RepairProgress;
import io.ringkv.repair.TokenIntervals;
import io.ringkv.replication.RemoteReplica;
import io.ringkv.replication.ReplicaDirectory;
import io.ringkv.ring.ClusterMembership;
import io.ringkv.ring.HashRing;
import io.ringkv.ring.MemberState;
import io.ringkv.ring.TokenRange.Interval;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.retry.Retry;

/**
 * A node's data moving in and out as the cluster grows and shrinks, on {@link RangeSync}: a
 * joining node pulls the ranges it will own; a leaving node, scaled down (its StatefulSet scaled
 * below it), drains its data to the next owners before it stops: the scale-down hand-over.
 *
 * <p><b>Joining</b>, however the members are found. A node whose store never finished joining (a
 * new node or pod, a wiped data directory, a cleared volume) says JOINING from its first answer to
 * a peer: it takes writes for the ranges it will own, but no read asks it and it is not ready.
 * Once it knows its ring (with a static peer list: once it has asked each peer for its state), if
 * no other member holds data (a new cluster: every one is JOINING, or gave no answer to a store
 * that never saw it hold any), it is NORMAL at once; otherwise it waits until its peers have seen
 * it join (with DNS discovery two rounds, so that every write from then on reaches it; a static
 * list's members are on every ring already), pulls from each current owner the ranges it will
 * own, and becomes NORMAL, which it tells its peers at once. A pull that fails is tried again; a
 * ring that changed meanwhile is pulled again (only what differs moves). An owner that stays
 * unreachable (a crash-looping pod) holds the join up for at most {@code ownerWait}: after that
 * the node joins once it has pulled each range from enough of its owners to hold every write a
 * majority of them acknowledged, which is every write made at the default {@code replicas}; a
 * write made at less than a majority may then be only on the unreachable owner. Short of that it
 * keeps trying, since joining would lose acknowledged writes. A node restarted on its own data
 * does not join: it catches up through hints, read repair and anti-entropy.
 *
 * <p><b>Leaving (scale down).</b> When the node is told to stop and {@code scaledAway} says it is not coming
 * back (its StatefulSet was scaled below it), it marks its store as left (a volume that returns
 * later is cleared, see {@link RepairLedger}), says LEAVING, waits until its peers have seen that
 * (so that writes also reach the next owners), and pushes to each next owner everything it holds
 * for them, newer records only, within {@code leaveTimeout}. Once every push is done it says LEFT,
 * which it tells its peers at once: from then on they neither read from it nor count its acks,
 * and it answers the calls they placed before for {@code linger}, so its exit fails no request.
 * A crash, or a leave cut short, is covered by the other replicas and by repair.
 *
 * <p><b>Moving zones.</b> A node set up in another zone than its store joined in leaves where it
 * is and joins in the new zone, with the two hand-overs above ({@link #moveZone}).
 */
public final class DataMovement implements SmartLifecycle {

    private static final Logger log = LoggerFactory.getLogger(DataMovement.class);
    /** Leaving nodes push to this many next owners at once; each transfer has its own records in flight. */
    private static final int PUSHES = 2;

    /**
     * @param replicationFactor what each key's first owners are counted in
     * @param settle            how long peers take to see this node's state: two discovery rounds
     * @param zoneMoveSettle    how long peers take to see a node moving zones at each step, its
     *                          new zone included: two rounds of pings, with a static list too
     * @param retry             how long a join waits before pulling again from a peer that failed
     * @param ownerWait         how long a join waits for an unreachable owner before it joins
     *                          without it, if the others hold every majority write
     * @param leaveTimeout      how long a leaving node may push before it stops regardless
     * @param linger            how long a node that said LEFT still answers its peers: the calls
     *                          they placed on it before they heard it end within this
     */
    public record Settings(int replicationFactor, Duration settle, Duration zoneMoveSettle, Duration retry, Duration ownerWait,
            Duration leaveTimeout, Duration linger) {
    }

    private final ClusterMembership membership;
    private final ReplicaDirectory replicas;
    private final RangeSync sync;
    private final RepairLedger ledger;
    private final Supplier<Mono<Boolean>> scaledAway;
    private final Settings settings;
    private final LongSupplier clock;
    private volatile RepairProgress running;
    /** The join or zone move under way. */
    private volatile Disposable movement;
    private volatile boolean started;

    /** @param scaledAway whether this node is stopping for good; null where nothing can tell (it never leaves) */
    public DataMovement(ClusterMembership membership, ReplicaDirectory replicas, RangeSync sync, RepairLedger ledger,
            Supplier<Mono<Boolean>> scaledAway, Settings settings, LongSupplier clock) {
        this.membership = membership;
        this.replicas = replicas;
        this.sync = sync;
        this.ledger = ledger;
        this.scaledAway = scaledAway;
        this.settings = settings;
        this.clock = clock;
        // Before any server starts: the first answer a peer gets already says so.
        if (!ledger.joined()) {
            ledger.markJoining();
            membership.setState(membership.self(), MemberState.JOINING);
        }
    }

    /** The transfer under way (a join's pull or a leave's push), for {@code /v0/cluster}; null if none. */
    public RepairProgress.Snapshot running() {
        RepairProgress now = running;
        return now == null ? null : now.snapshot();
    }

    @Override
    public void start() {
        started = true;
        if (ledger.markedLeft()) {
            // Marked left already: a store found behind its peers' purges before this start. It
            // serves again only once a restart has cleared it.
            return;
        }
        Mono<Void> movement;
        if (membership.state(membership.self()) == MemberState.JOINING) {
            movement = join();
        } else if (membership.zoneToMoveTo().isPresent()) {
            movement = moveZone().then(Mono.defer(this::join));
        } else {
            return;
        }
        this.movement = movement.subscribe(ignored -> {
        }, error -> log.error("moving data stopped: {}", error.toString()));
    }

    /** Pulls the ranges this node will own from their current owners, then says NORMAL. */
    private Mono<Void> join() {
        long begun = clock.getAsLong();
        AtomicLong keys = new AtomicLong();
        AtomicLong bytes = new AtomicLong();
        return ringKnown()
                .flatMap(known -> !othersHoldData() ? Mono.empty() : Mono.delay(settings.settle())
                        .then(Mono.defer(() -> pullRound(begun, keys, bytes)).retryWhen(untilDone("joining", "pulling"))))
                .then(Mono.defer(() -> {
                    if (!ledger.markJoined()) {
                        log.warn("pulled its ranges, but the store was marked left meanwhile: it stays JOINING");
                        return Mono.empty();
                    }
                    membership.setState(membership.self(), MemberState.NORMAL);
                    if (ledger.markedLeft()) {
                        // Marked left between the two (PurgeHorizonCheck): its JOINING must stand.
                        membership.setState(membership.self(), MemberState.JOINING);
                        return Mono.empty();
                    }
                    log.info("joined: pulled {} keys ({} bytes) in {} ms; serving reads", keys.get(), bytes.get(),
                            clock.getAsLong() - begun);
                    // Told at once: its peers read from it as soon as it is ready, not a probe later.
                    // (Told after the change, never before, so that no answer it gives a peer's probe
                    // meanwhile still says JOINING after the peer heard NORMAL.)
                    return replicas.tellPeers();
                }));
    }

    /**
     * A move to another zone, as a leave and a join of the same node: its replicas would otherwise
     * move to members that do not hold their data. It says LEAVING in the zone it is placed in and,
     * once its peers have seen that, pushes to each next owner of the ring without it what it
     * holds for them, as a leave does, trying again until every next owner has it (a move has no
     * deadline; a restart begins it again). Then its store is no member's any more (a restart
     * joins), it says JOINING, takes its new zone and joins there ({@link #join}). Each step waits
     * {@code zoneMoveSettle} for the peers to see it. Between the two, reads ask the ring without
     * it, whose owners hold its data; every key's replicas are in as many zones before, during and
     * after. Its data moves twice, which a rare move can afford.
     */
    private Mono<Void> moveZone() {
        String self = membership.self();
        long begun = clock.getAsLong();
        AtomicLong keys = new AtomicLong();
        AtomicLong bytes = new AtomicLong();
        return ringKnown()
                .then(Mono.defer(() -> {
                    log.info("moving from zone '{}' to '{}': handing its data to the next owners first",
                            membership.selfMember().zone().orElse(""), membership.zoneToMoveTo().orElse(""));
                    membership.setState(self, MemberState.LEAVING);
                    return toldWithinSettle();
                }))
                .then(Mono.delay(settings.zoneMoveSettle()))
                .then(Mono.defer(() -> pushToNextOwners(keys, bytes))
                        .flatMap(unreached -> unreached == 0 ? Mono.<Void>empty()
                                : Mono.error(new IllegalStateException(unreached + " next owners could not be reached")))
                        .retryWhen(untilDone("moving zones", "pushing")))
                .then(Mono.defer(() -> {
                    log.info("moving zones: pushed {} keys ({} bytes) to the next owners in {} ms; joining in zone '{}'",
                            keys.get(), bytes.get(), clock.getAsLong() - begun, membership.zoneToMoveTo().orElse(""));
                    ledger.markJoining();
                    // JOINING before the new zone: reads ask the ring without it from now on.
                    membership.setState(self, MemberState.JOINING);
                    membership.moveToPlannedZone();
                    return toldWithinSettle();
                }))
                // Peers place it in its new zone, and send it the writes of its new ranges, before it pulls them.
                .then(Mono.delay(settings.zoneMoveSettle()))
                .then();
    }

    /** Once this node knows its ring (with DNS discovery: after its first round). */
    private Mono<Long> ringKnown() {
        return Flux.interval(Duration.ofMillis(200)).filter(tick -> membership.isKnown()).next();
    }

    /** A transfer round tried again every {@code retry}, for as long as it takes: giving up would lose data. */
    private Retry untilDone(String doing, String again) {
        return Retry.fixedDelay(Long.MAX_VALUE, settings.retry()).doBeforeRetry(signal -> log.warn("{}: {}; {} again in {}", doing,
                signal.failure().getMessage(), again, settings.retry()));
    }

    /** Tells every peer this node's state now, within the settle time: one that does not answer sees it at its next probe. */
    private Mono<Void> toldWithinSettle() {
        return replicas.tellPeers().timeout(settings.settle()).onErrorResume(error -> {
            log.info("not every peer heard this node is {} within {}: they see it at their next probe",
                    membership.state(membership.self()), settings.settle());
            return Mono.empty();
        });
    }

    private boolean othersHoldData() {
        boolean any = membership.othersHoldData();
        if (!any) {
            log.info("no peer holds data yet (a new cluster): nothing to pull");
        }
        return any;
    }

    /**
     * Pulls from every current owner what this node will own; fails if the ring changed meanwhile
     * (a new round then covers the new ring), or if a peer could not be pulled from, unless the
     * join has waited {@code ownerWait} and the owners it did pull from hold every majority write.
     */
    private Mono<Void> pullRound(long begun, AtomicLong keys, AtomicLong bytes) {
        ClusterMembership.View view = membership.view();
        String self = membership.self();
        // What it owns with no other joiner finished yet: the most it may have to serve.
        HashRing owning = view.joining().getOrDefault(self, view.future());
        List<String> sources = view.current().names().stream().filter(member -> !member.equals(self)).toList();
        Set<String> pulled = ConcurrentHashMap.newKeySet();
        return Flux.fromIterable(sources)
                .concatMap(source -> {
                    List<Interval> intervals = TokenIntervals.moving(view.current(), owning, settings.replicationFactor(), source, self);
                    if (intervals.isEmpty()) {
                        pulled.add(source);
                        return Mono.empty();
                    }
                    long startedMillis = clock.getAsLong();
                    return transfer(source, intervals, RangeSync.Direction.PULL, keys, bytes).flatMap(done -> {
                        if (!done) {
                            return Mono.just(false);
                        }
                        pulled.add(source);
                        // Both sides remember it as a repair: it bounds what each may purge, and the
                        // purge horizons they check in each other (PurgeHorizonCheck).
                        ledger.caughtUpWith(source, startedMillis);
                        RemoteReplica peer = replicas.remote(source);
                        return peer == null ? Mono.just(true)
                                : peer.repaired(startedMillis).onErrorResume(error -> Mono.empty()).thenReturn(true);
                    });
                }, 1)
                .then(Mono.defer(() -> {
                    if (membership.view().version() != view.version()) {
                        return Mono.error(new IllegalStateException("the ring changed while pulling"));
                    }
                    if (pulled.size() == sources.size()) {
                        return Mono.empty();
                    }
                    List<String> missed = sources.stream().filter(source -> !pulled.contains(source)).toList();
                    boolean majorityWritesHeld = TokenIntervals.notCoveredByMajorityWrites(view.current(), owning,
                            settings.replicationFactor(), self, pulled).isEmpty();
                    long waited = clock.getAsLong() - begun;
                    if (majorityWritesHeld && waited >= settings.ownerWait().toMillis()) {
                        log.warn("joining without {}, still unreachable {} s after the join began"
                                + " (ringkv.cluster.join.owner-wait): the owners pulled from hold every write a majority"
                                + " acknowledged; a write made at less than a majority may be only on {}", missed, waited / 1000, missed);
                        return Mono.empty();
                    }
                    return Mono.error(new IllegalStateException("could not pull from " + missed + (majorityWritesHeld
                            ? "; the others hold every majority write, so the join goes on without them after "
                                    + settings.ownerWait()
                            : "; without them some writes acknowledged by a majority would be missing, so the join waits")));
                }));
    }

    /** One transfer with one peer; true once it finished, false (logged) if it failed. */
    private Mono<Boolean> transfer(String name, List<Interval> intervals, RangeSync.Direction direction, AtomicLong keys,
            AtomicLong bytes) {
        RemoteReplica peer = replicas.remote(name);
        String kind = direction == RangeSync.Direction.PULL ? "join" : "leave";
        if (peer == null || !peer.isAvailable()) {
            log.warn("{}: {} is not reachable", kind, name);
            return Mono.just(false);
        }
        RepairProgress progress = new RepairProgress(kind, name, clock.getAsLong(), intervals);
        running = progress;
        return sync.sync(peer, intervals, direction, progress)
                .then(Mono.fromCallable(() -> {
                    progress.finished("done");
                    RepairProgress.Snapshot done = progress.snapshot();
                    long moved = done.keysPulled() + done.keysPushed();
                    keys.addAndGet(moved);
                    bytes.addAndGet(done.bytes());
                    log.info("{}: {} {} keys ({} bytes) {} {} in {} ms", kind,
                            direction == RangeSync.Direction.PULL ? "pulled" : "pushed", moved, done.bytes(),
                            direction == RangeSync.Direction.PULL ? "from" : "to", name, clock.getAsLong() - done.startedMillis());
                    return true;
                }))
                .onErrorResume(error -> {
                    progress.finished("failed: " + error.getMessage());
                    log.warn("{}: transfer with {} failed: {}", kind, name, error.toString());
                    return Mono.just(false);
                })
                .doFinally(signal -> running = null);
    }

    /**
     * Runs on the thread that closes the application, before the servers stop: a leaving node
     * still answers its peers while it hands its data over.
     */
    @Override
    public void stop() {
        started = false;
        if (movement != null) {
            movement.dispose();
        }
        if (scaledAway == null || !membership.isKnown()) {
            return;
        }
        boolean leaving;
        try {
            leaving = Boolean.TRUE.equals(scaledAway.get().block(Duration.ofSeconds(5)));
        } catch (RuntimeException e) {
            log.warn("could not tell whether this node is scaled away ({}): stopping as for a restart", e.toString());
            return;
        }
        if (leaving) {
            leave();
        } else {
            log.info("stopping for a restart: this node stays a member");
        }
    }

    private void leave() {
        long begun = clock.getAsLong();
        ledger.markLeft().join();
        if (!membership.state(membership.self()).holdsData()) {
            log.info("this node is scaled away before it finished joining: nothing to hand over");
            return;
        }
        membership.setState(membership.self(), MemberState.LEAVING);
        log.info("this node is scaled away: handing its data to the next owners, for at most {}", settings.leaveTimeout());
        // Each peer that answers sends writes to the next owners from now on; the settle covers one that does not.
        tellPeers();
        AtomicLong keys = new AtomicLong();
        AtomicLong bytes = new AtomicLong();
        Mono<Long> handOver = Mono.delay(settings.settle()).then(Mono.defer(() -> pushToNextOwners(keys, bytes)));
        try {
            long failed = handOver.block(settings.leaveTimeout());
            log.info("left: pushed {} keys ({} bytes) to the next owners in {} ms{}", keys.get(), bytes.get(),
                    clock.getAsLong() - begun, failed == 0 ? "" : "; " + failed + " of them could not be reached: repair covers them");
            if (failed == 0) {
                // The next owners hold what it held: its peers stop counting on it before it stops
                // answering, not a discovery round after (two pods leaving at once own some keys together).
                membership.setState(membership.self(), MemberState.LEFT);
                tellPeers();
                // A peer hears LEFT when it asks back; a write it placed here before that still gets its answer.
                Thread.sleep(settings.linger().toMillis());
            }
        } catch (RuntimeException e) {
            log.warn("left before the hand-over finished ({}): pushed {} keys ({} bytes) in {} ms; the other replicas"
                    + " and repair cover the rest", e.getMessage(), keys.get(), bytes.get(), clock.getAsLong() - begun);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Pushes to each next owner (of the ring without this node) what this node holds for it, newer
     * records only; the number of next owners it could not reach.
     */
    private Mono<Long> pushToNextOwners(AtomicLong keys, AtomicLong bytes) {
        ClusterMembership.View view = membership.view();
        String self = membership.self();
        return Flux.fromIterable(view.future().names())
                .filter(member -> !member.equals(self))
                .flatMap(receiver -> {
                    List<Interval> intervals = TokenIntervals.moving(view.current(), view.future(),
                            settings.replicationFactor(), self, receiver);
                    return intervals.isEmpty() ? Mono.just(true)
                            : transfer(receiver, intervals, RangeSync.Direction.PUSH, keys, bytes);
                }, PUSHES)
                .filter(done -> !done)
                .count();
    }

    /** Tells every peer this node's state now, waiting at most the settle time (on the thread that stops the node). */
    private void tellPeers() {
        toldWithinSettle().block();
    }

    @Override
    public boolean isRunning() {
        return started;
    }

    /** Stops just after the first to stop, the client drain: a leaving node's clients go elsewhere first. */
    @Override
    public int getPhase() {
        return DEFAULT_PHASE - 1;
    }
}
