package io.ringkv.replication;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BiConsumer;
import java.util.function.Supplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.ringkv.health.PeerMonitors;
import io.ringkv.peer.client.PeerClient;
import io.ringkv.peer.client.PeerConnector;
import io.ringkv.peer.wire.PeerStatus;
import io.ringkv.ring.ClusterMembership;
import io.ringkv.ring.HashRing;
import io.ringkv.ring.RingNotKnownException;
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
    private final ReplicaHistory history;
    private final Supplier<ReplicaWindow> windows;
    private final Map<String, RemoteReplica> remotes = new ConcurrentHashMap<>();
    private final List<BiConsumer<String, PeerStatus>> statusListeners = new CopyOnWriteArrayList<>();

    /** @param windows a new window for each peer: what this node may have in flight there */
    public ReplicaDirectory(ClusterMembership membership, LocalReplica local, PeerConnector connector, PeerMonitors monitors,
            ReplicaHistory history, Supplier<ReplicaWindow> windows) {
        this.membership = membership;
        this.history = history;
        this.windows = windows;
        this.monitors = monitors;
        membership.onChange(view -> forgetAllBut(view.ring().members()));
        this.local = local;
        this.connector = connector;
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
        return membership.ring().members().stream().map(this::replica).toList();
    }

    /** The other members of the ring. */
    public List<RemoteReplica> peers() {
        return membership.ring().members().stream()
                .filter(member -> !member.equals(membership.self()))
                .map(member -> (RemoteReplica) replica(member))
                .toList();
    }

    /** Hears what each member tells about itself when it is probed. */
    public void onStatus(BiConsumer<String, PeerStatus> listener) {
        statusListeners.add(listener);
    }

    /** Calls a member by its name, telling it this node's status and learning the state it reports; true if it answered. */
    public Mono<Boolean> probe(String member) {
        if (!(replica(member) instanceof RemoteReplica remote)) {
            return Mono.just(true);
        }
        return remote.probe(ownStatusFor(member))
                .doOnNext(status -> learned(member, status))
                .thenReturn(true)
                .onErrorReturn(false);
    }

    /**
     * A member showed a sign of life (it connected to this node, or pinged it). If this node shuns
     * it (its breaker is not closed, or its last call failed), it is pinged around its breaker and,
     * when it answers, called again at once: a restarted node is used as soon as it is back, not
     * after the breaker's open time. Cheap when it is not shunned; never blocks.
     */
    public void heardFrom(String member) {
        RemoteReplica remote = remote(member);
        if (remote == null || !remote.shunned()) {
            return;
        }
        remote.readmit(ownStatusFor(member)).subscribe(status -> learned(member, status),
                error -> log.info("{} showed a sign of life but did not answer a ping: {}", member, error.toString()));
    }

    private PeerStatus ownStatusFor(String member) {
        return history.statusFor(member, membership.state(membership.self()));
    }

    /** What a member told about itself in its answer to a ping. */
    private void learned(String member, PeerStatus status) {
        RemoteReplica.stateOf(status).ifPresent(reported -> membership.setState(member, reported));
        statusListeners.forEach(listener -> listener.accept(member, status));
    }

    /** Where keys live now: one snapshot of the rings, for one request; refused while the ring is not known. */
    public Placement placement() {
        requireKnownRing();
        ClusterMembership.View view = membership.view();
        return new Placement(view.current(), view.future(), view.joining().values(), this::replica);
    }

    private void requireKnownRing() {
        if (!membership.isKnown()) {
            throw new RingNotKnownException();
        }
    }

    /** A peer by name, or null if it is not a member (any more). */
    public RemoteReplica remote(String member) {
        return membership.ring().members().contains(member) && !member.equals(membership.self())
                ? (RemoteReplica) replica(member)
                : null;
    }

    /** Closes the connections to peers that left the ring. */
    private void forgetAllBut(List<String> members) {
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
