package io.ringkv.discovery;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Function;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.ringkv.ring.ClusterMembership;
import io.ringkv.ring.Member;
import io.ringkv.lifecycle.PeriodicTask;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * With a static peer list, what DNS discovery does besides finding the members: every refresh
 * interval it pings each peer, which tells the peer this node's state and learns the peer's. So
 * a member that pulls its ranges before it serves them (its store was new or emptied) is JOINING
 * everywhere, and read from nowhere, until it says NORMAL. Each answer also tells what the peer
 * says of itself (its attributes), which the ring takes; its names never change.
 *
 * <p>A node whose own store is not a member's yet knows its ring only after the first round
 * ({@link ClusterMembership#fixedJoining}): by then each peer has told its state, or failed
 * within its call's timeout, and whether any holds data decides whether the node pulls first
 * ({@link ClusterMembership#othersHoldData}). A peer that does not answer is not waited for:
 * the nodes of a new cluster may start one at a time, and no node's readiness waits on another.
 */
public final class StaticPeers extends PeriodicTask {

    private static final Logger log = LoggerFactory.getLogger(StaticPeers.class);

    private final ClusterMembership membership;
    private final Duration refreshInterval;
    private final Function<String, Mono<Optional<Member>>> probe;

    /**
     * @param probe pings a member by its name, telling it this node's state and learning its own;
     *              the member as it tells itself if it answered, empty if not (it never fails),
     *              within the call's timeout
     */
    public StaticPeers(ClusterMembership membership, Duration refreshInterval, Function<String, Mono<Optional<Member>>> probe) {
        this.membership = membership;
        this.refreshInterval = refreshInterval;
        this.probe = probe;
    }

    /** Pings every peer at once; the ring is known once each has answered or failed. */
    Mono<Void> round() {
        List<String> peers = membership.ring().names().stream().filter(member -> !member.equals(membership.self())).toList();
        return Flux.fromIterable(peers)
                .flatMap(probe)
                .flatMap(Mono::justOrEmpty)
                .collectList()
                .doOnNext(answered -> {
                    learn(answered);
                    if (!membership.isKnown()) {
                        log.info("asked the {} peers of its list for their states: {} answered", peers.size(), answered.size());
                        membership.markKnown();
                    }
                })
                .then();
    }

    /** The ring's members as those that answered told themselves; the others as they were. */
    private void learn(List<Member> answered) {
        Map<String, Member> members = new TreeMap<>();
        membership.ring().members().forEach(member -> members.put(member.name(), member));
        answered.forEach(told -> members.replace(told.name(), told));
        membership.update(members.values());
    }

    @Override
    protected Disposable begin() {
        return round()
                .thenMany(everyPeriod(refreshInterval, Schedulers.parallel(), this::round,
                        error -> log.warn("pinging the peers failed this round: {}", error.toString())))
                .subscribe();
    }

    /** As DNS discovery: starts before the background work that needs the peers' states (a join), stops after it. */
    @Override
    public int getPhase() {
        return DEFAULT_PHASE - 100;
    }
}
