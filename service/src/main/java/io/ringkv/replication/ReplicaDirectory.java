package io.ringkv.replication;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiFunction;
import java.util.function.Supplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.ringkv.ledger.RepairLedger;
import io.ringkv.health.PeerMonitors;
import io.ringkv.peer.client.PeerClient;
import io.ringkv.peer.client.PeerConnector;
import io.ringkv.peer.wire.PeerStatus;
import io.ringkv.ring.ClusterMembership;
import io.ringkv.ring.HashRing;
import io.ringkv.ring.Member;
import io.ringkv.ring.MemberState;
import io.ringkv.ring.RingNotKnownException;
import io.ringkv.tombstones.PurgeHorizonCheck;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Maps the ring's member names to {@link Replica}s: this node to its local store, every other
 * member to a {@link RemoteReplica} with its own connections and circuit breaker, created on
 * first use.
 */
public final class ReplicaDirectory implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ReplicaDirectory.class);

    private final ClusterMembership membership;
    private final LocalReplica local;
    private final PeerConnector connector;
    private final PeerMonitors monitors;
    private final RepairLedger ledger;
    private final Supplier<ReplicaWindow> windows;
    private final Map<String, RemoteReplica> remotes = new ConcurrentHashMap<>();
    private final PurgeHorizonCheck purgeCheck;
    /** When each member last told its state in a ping of its own (System.nanoTime). */
    private final Map<String, Long> toldInPingAt = new ConcurrentHashMap<>();
    /** Members asked back for their state after their ping told a change ({@link #askBackIfChanged}). */
    private final Set<String> askingBack = ConcurrentHashMap.newKeySet();

    /**
     * @param windows          a new window for each peer: what this node may have in flight there
     * @param purgeCheck       hears what each member tells about itself, and decides the state this
     *                         node hears from it: as told, or JOINING for a store behind this node's purges
     * @param events           what peers tell in calls of their own: a peer that connects or pings is
     *                         readmitted at once if this node shuns it ({@link #heardFrom})
     * @param membersDiscovered with DNS discovery, a ping that tells a change makes this node ask the
     *                         member back ({@link #askBackIfChanged}); with a static peer list, the
     *                         state a member tells in its ping is heard as from its answer ({@link #toldInPing})
     */
    public ReplicaDirectory(ClusterMembership membership, LocalReplica local, PeerConnector connector, PeerMonitors monitors,
            RepairLedger ledger, Supplier<ReplicaWindow> windows, PurgeHorizonCheck purgeCheck, PeerEvents events,
            boolean membersDiscovered) {
        this.membership = membership;
        this.ledger = ledger;
        this.windows = windows;
        this.monitors = monitors;
        this.local = local;
        this.connector = connector;
        this.purgeCheck = purgeCheck;
        membership.onChange(view -> forgetAllBut(view.ring().names()));
        events.onSignOfLife(signOfLife -> heardFrom(signOfLife.member(), signOfLife.clusterPort()));
        if (membersDiscovered) {
            // A node back on an old volume PINGs before it has heard whether its peers purged deletes
            // it missed (PurgeHorizonCheck), so its PING may say NORMAL while its answers already say
            // JOINING: only the answers, made after the check, count, and a PING that tells a change
            // is answered by asking back.
            events.onStatusInPing(ping -> askBackIfChanged(ping.member(), ping.status()));
        } else {
            events.onStatusInPing(ping -> toldInPing(ping.member(), ping.status()));
        }
    }

    public HashRing ring() {
        return membership.ring();
    }

    /** The replicas that hold the key, its primary first. */
    public List<Replica> replicasFor(byte[] key, int count) {
        return membership.ring().replicasFor(key, count).stream().map(this::replica).toList();
    }

    /** Every member of the ring, for a request; refused while the ring is not known ({@link RingNotKnownException}). */
    public List<Replica> all() {
        requireKnownRing();
        return membership.ring().names().stream().map(this::replica).toList();
    }

    /** The other members of the ring. */
    public List<RemoteReplica> peers() {
        return membership.ring().names().stream()
                .filter(member -> !member.equals(membership.self()))
                .map(member -> (RemoteReplica) replica(member))
                .toList();
    }

    /**
     * Calls a member by its name through its breaker, telling it this node's status and learning
     * the state it reports; the member as it tells itself (its attributes) if it answered, empty
     * if not (it never fails).
     */
    public Mono<Optional<Member>> probe(String member) {
        return ask(member, RemoteReplica::probe);
    }

    /**
     * Like {@link #probe}, around the member's breaker: an exchange of states, which says nothing
     * of the member's health, so a member this node shuns takes part too.
     */
    public Mono<Optional<Member>> exchangeStates(String member) {
        return ask(member, RemoteReplica::exchange);
    }

    private Mono<Optional<Member>> ask(String member, BiFunction<RemoteReplica, PeerStatus, Mono<PeerStatus>> ping) {
        if (!(replica(member) instanceof RemoteReplica remote)) {
            return Mono.just(Optional.of(membership.selfMember()));
        }
        return Mono.defer(() -> {
            long sentNanos = System.nanoTime();
            return ping.apply(remote, ownStatusFor(member)).doOnNext(status -> answered(member, status, sentNanos));
        }).map(status -> Optional.of(new Member(member, status.attributes()))).onErrorReturn(Optional.empty());
    }

    /**
     * A member showed a sign of life (it connected to this node, or pinged it), telling in its ping
     * the port it answers peers on (0: it did not): it is called there from now on. If this node
     * shuns it (its breaker is not closed, or its last call failed), it is pinged around its breaker
     * and, when it answers, called again at once: a restarted node is used as soon as it is back,
     * not after the breaker's open time. A ping that told the port is proof enough: the member is
     * called again before the ping is answered, so that a restarted node, which is ready only once
     * its peers answered its ping, is called by each of them from the moment it is ready. Cheap
     * when it is not shunned; never blocks.
     */
    public void heardFrom(String member, int clusterPort) {
        RemoteReplica remote = remote(member);
        if (remote == null) {
            return;
        }
        remote.toldClusterPort(clusterPort);
        if (!remote.shunned()) {
            return;
        }
        if (clusterPort > 0) {
            remote.readmitNow();
        }
        long sentNanos = System.nanoTime();
        remote.readmit(ownStatusFor(member)).subscribe(status -> answered(member, status, sentNanos),
                error -> log.info("{} showed a sign of life but did not answer a ping: {}", member, error.toString()));
    }

    /**
     * Tells every peer this node's state now, rather than leave it to their next probe of it, and
     * learns theirs: an exchange with each at once, each within its call's timeout. A peer that
     * does not answer learns it when it next probes this node.
     */
    public Mono<Void> tellPeers() {
        return Flux.fromIterable(peers()).flatMap(peer -> exchangeStates(peer.name())).then();
    }

    private PeerStatus ownStatusFor(String member) {
        return ledger.statusFor(member, membership.state(membership.self())).withAttributes(membership.selfMember().attributes());
    }

    /**
     * What a member told about itself in its answer to a ping this node sent at {@code sentNanos}.
     * Its state is heard unless the member has told one in a ping of its own since: such a ping
     * may tell a change (a node that has joined tells its peers at once), and an answer that
     * crossed it may have been made before the change.
     */
    void answered(String member, PeerStatus status, long sentNanos) {
        Long toldAt = toldInPingAt.get(member);
        if (toldAt == null || toldAt - sentNanos < 0) {
            heard(member, status);
        }
        purgeCheck.observe(member, status);
    }

    /**
     * What a member told about itself in a ping of its own (only a member's is heard: see
     * {@code peer.message.Trust}): its state takes effect at once, so that a change it tells its peers is
     * read by them as soon as it is made.
     */
    public void toldInPing(String member, PeerStatus status) {
        if (MemberState.told(status.state()).isPresent()) {
            toldInPingAt.put(member, System.nanoTime());
            heard(member, status);
        }
    }

    /**
     * What a member told about itself in a ping of its own, where only answers are heard (DNS
     * discovery: a node back on an old volume pings before its purge-horizon check, so its ping
     * may say NORMAL where its answers say JOINING). A ping that tells another state than the one
     * this node holds for the member is a sign that it changed (it joined, or it handed its data
     * over and says LEFT): this node asks it back at once and hears the answer, instead of waiting
     * for its next probe. At most one such exchange per member at a time; never blocks.
     */
    public void askBackIfChanged(String member, PeerStatus status) {
        if (remote(member) == null || !differsFromKnown(member, status) || !askingBack.add(member)) {
            return;
        }
        exchangeStates(member).doFinally(signal -> askingBack.remove(member)).subscribe();
    }

    /** Whether a member's status tells a state, as this node would hear it, other than the one it holds. */
    boolean differsFromKnown(String member, PeerStatus status) {
        return MemberState.told(status.state())
                .map(told -> purgeCheck.stateToHear(member, status, told) != membership.state(member))
                .orElse(false);
    }

    /** What a member told: its state, and its attributes (the ring takes them at once, not at the next discovery round). */
    private void heard(String member, PeerStatus status) {
        MemberState.told(status.state()).ifPresent(reported -> membership.setState(member, purgeCheck.stateToHear(member, status, reported)));
        membership.told(member, status.attributes());
    }

    /** Where keys live now: one snapshot of the rings, for one request; refused while the ring is not known. */
    public Placement placement() {
        requireKnownRing();
        ClusterMembership.View view = membership.view();
        return new Placement(view.current(), view.future(), view.joining().values(), this::replica, membership.selfMember().zone());
    }

    private void requireKnownRing() {
        if (!membership.isKnown()) {
            throw new RingNotKnownException();
        }
    }

    /** A peer by name, or null if it is not a member (any more). */
    public RemoteReplica remote(String member) {
        return membership.ring().names().contains(member) && !member.equals(membership.self())
                ? (RemoteReplica) replica(member)
                : null;
    }

    /** Closes the connections to peers that left the ring. */
    private void forgetAllBut(List<String> members) {
        toldInPingAt.keySet().retainAll(members);
        remotes.keySet().removeIf(name -> {
            if (members.contains(name)) {
                return false;
            }
            remotes.get(name).close();
            return true;
        });
    }

    private Replica replica(String member) {
        if (member.equals(membership.self())) {
            return local;
        }
        return remotes.computeIfAbsent(member, name -> new RemoteReplica(new PeerClient(name, connector), monitors.of(name), windows.get()));
    }

    @Override
    public void close() {
        remotes.values().forEach(RemoteReplica::close);
        remotes.clear();
    }
}
