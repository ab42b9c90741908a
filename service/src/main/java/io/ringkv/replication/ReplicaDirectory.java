package io.ringkv.replication;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.ringkv.ring.ClusterMembership;
import io.ringkv.ring.HashRing;

/**
 * Maps the ring's member names to {@link Replica}s: this node to its local store, every other
 * member to a {@link RemoteReplica} with its own connection pool, created on first use.
 */
public final class ReplicaDirectory implements AutoCloseable {

    private final ClusterMembership membership;
    private final LocalReplica local;
    private final PeerClientSettings peerSettings;
    private final Map<String, RemoteReplica> remotes = new ConcurrentHashMap<>();

    public ReplicaDirectory(ClusterMembership membership, LocalReplica local, PeerClientSettings peerSettings) {
        this.membership = membership;
        this.local = local;
        this.peerSettings = peerSettings;
    }

    public HashRing ring() {
        return membership.ring();
    }

    /** The replicas that hold the key, its primary first. */
    public List<Replica> replicasFor(byte[] key, int count) {
        return membership.ring().replicasFor(key, count).stream().map(this::replica).toList();
    }

    /** Every member of the ring. */
    public List<Replica> all() {
        return membership.ring().members().stream().map(this::replica).toList();
    }

    private Replica replica(String member) {
        if (member.equals(membership.self())) {
            return local;
        }
        return remotes.computeIfAbsent(member, name -> new RemoteReplica(name, peerSettings));
    }

    @Override
    public void close() {
        remotes.values().forEach(RemoteReplica::close);
        remotes.clear();
    }
}
