package io.ringkv.handover;

import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

import io.ringkv.ring.ClusterMembership;
import io.ringkv.ring.MemberState;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Flux;

/**
 * Starts a {@link Cleanup} by itself once the ring has settled after a change, as ScyllaDB does
 * after topology changes, so that the old owners of the ranges new nodes took do not keep their
 * copies until someone asks. Dropping is safe only by the ring every peer uses, and a node cannot
 * see its peers' rings; but each peer adopts a change within seconds (its next discovery round
 * resolves the members, and probes them for their states). So a view, members and states, that
 * this node has had unchanged for {@code settle} (minutes) is one every peer has had time to
 * adopt. Then, if this node is NORMAL, no data moves, and it keeps tokens it owns in none of its
 * rings, it cleans up by that view. A cleanup done on a view (on request too) is not repeated on
 * it; one that stopped (the view changed) or failed is tried again once the view has stayed
 * unchanged for {@code settle} since it ended.
 *
 * <p>A static peer list never changes its view: there the node cleans up once, {@code settle}
 * after it starts, if it owns tokens in none of its rings (fewer than every member own each key),
 * which drops copies made by a {@code from} larger than the replication factor.
 */
public final class AutomaticCleanup implements SmartLifecycle {

    private static final Logger log = LoggerFactory.getLogger(AutomaticCleanup.class);
    /** How often the view is looked at: bounds how late past the settle time a cleanup starts. */
    private static final Duration TICK = Duration.ofSeconds(1);

    /** A view and since when this node has had it: any change, a member's state included, starts the clock again. */
    record Steady(ClusterMembership.View view, long sinceMillis) {

        Steady after(ClusterMembership.View now, long nowMillis) {
            return now == view ? this : new Steady(now, nowMillis);
        }
    }

    /**
     * What the decision looks at, read at one tick.
     *
     * @param doneOnView whether the last cleanup completed on {@code steady}'s view
     */
    record Observation(long nowMillis, Steady steady, boolean ringKnown, MemberState selfState, Cleanup.Status last,
            boolean doneOnView) {
    }

    private final Cleanup cleanup;
    private final ClusterMembership membership;
    private final Duration settle;
    private final LongSupplier clock;
    private Steady steady;
    /** The last view found to leave nothing to drop: looked up once per view, not at every tick. */
    private ClusterMembership.View nothingToDropOn;
    private volatile Disposable loop = Disposables.disposed();

    /** @param settle how long the view must stay unchanged before a cleanup starts (ringkv.cleanup.settle); zero: never */
    public AutomaticCleanup(Cleanup cleanup, ClusterMembership membership, Duration settle, LongSupplier clock) {
        this.cleanup = cleanup;
        this.membership = membership;
        this.settle = settle;
        this.clock = clock;
    }

    /**
     * Whether a cleanup should start now: on (a settle time above zero), none running, none done
     * on this view, the view safe to drop by ({@link Cleanup#whyNotNow}), unchanged for the settle
     * time and as long since the last cleanup ended, and something to drop. {@code somethingToDrop}
     * is asked last: it costs the most.
     */
    static boolean shouldStart(Duration settle, Observation seen, BooleanSupplier somethingToDrop) {
        if (settle.isZero() || seen.last().running() || seen.doneOnView()
                || Cleanup.whyNotNow(seen.ringKnown(), seen.selfState(), seen.steady().view()).isPresent()) {
            return false;
        }
        // One that failed on this view is tried again only after a settle time of its own, not at every tick.
        long quietSince = seen.last().ended() == null
                ? seen.steady().sinceMillis()
                : Math.max(seen.steady().sinceMillis(), seen.last().ended().toEpochMilli());
        return seen.nowMillis() - quietSince >= settle.toMillis() && somethingToDrop.getAsBoolean();
    }

    /** Parallel thread, one tick at a time: nothing here waits; the cleanup itself runs on a storage thread. */
    private void tick() {
        long now = clock.getAsLong();
        ClusterMembership.View view = membership.view();
        steady = steady == null ? new Steady(view, now) : steady.after(view, now);
        var seen = new Observation(now, steady, membership.isKnown(), membership.state(membership.self()), cleanup.status(),
                cleanup.doneOn(view));
        if (!shouldStart(settle, seen, () -> somethingToDrop(view))) {
            return;
        }
        log.info("cleanup starts by itself: ring version {} ({} members, none joining or leaving) unchanged for {} "
                + "(ringkv.cleanup.settle), time for every peer to have adopted it, and this node keeps tokens it owns in none",
                view.version(), view.ring().size(), settle);
        try {
            cleanup.startAutomatically(view);
        } catch (IllegalStateException notNow) {
            // A request or a change of the view came in between: the next ticks look again.
            log.info("cleanup did not start by itself: {}", notNow.getMessage());
        }
    }

    private boolean somethingToDrop(ClusterMembership.View view) {
        if (view == nothingToDropOn) {
            return false;
        }
        if (cleanup.leftovers(view).isEmpty()) {
            nothingToDropOn = view;
            return false;
        }
        return true;
    }

    @Override
    public void start() {
        if (settle.isZero()) {
            log.info("automatic cleanup is off (ringkv.cleanup.settle=0): POST /actuator/cleanup runs one");
            return;
        }
        loop = Flux.interval(TICK, TICK)
                .onBackpressureDrop()
                .subscribe(tick -> {
                    try {
                        tick();
                    } catch (RuntimeException e) {
                        log.warn("automatic cleanup check failed: {}", e.toString());
                    }
                });
    }

    @Override
    public void stop() {
        loop.dispose();
    }

    @Override
    public boolean isRunning() {
        return !loop.isDisposed();
    }
}
