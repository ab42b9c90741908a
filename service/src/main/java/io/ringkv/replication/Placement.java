package io.ringkv.replication;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.stream.Stream;

import io.ringkv.ring.HashRing;
import io.ringkv.ring.Member;

/**
 * Where a request's keys live, as of one moment: the rings of one request, taken once so that the
 * replication factor is checked against the same ring the replicas come from. Reads ask the
 * current owners; writes also go to the owners a key is moving to while members join or leave,
 * and only the current owners count towards {@code ack}, since they are the ones reads ask.
 *
 * @param current the members that own data now (NORMAL and LEAVING)
 * @param future  the members that will once joining and leaving finish (NORMAL and JOINING)
 * @param joining for each joining member, {@code current} with it added: the rings reads may use
 *                as joins finish one by one (see {@code ClusterMembership.View})
 * @param zone    the zone of the node that coordinates, if it has one: reads ask its zone first
 */
public record Placement(HashRing current, HashRing future, Collection<HashRing> joining, Function<String, Replica> replicas,
        Optional<String> zone) {

    /** For a node without a zone. */
    public Placement(HashRing current, HashRing future, Collection<HashRing> joining, Function<String, Replica> replicas) {
        this(current, future, joining, replicas, Optional.empty());
    }

    /** How many members own data: what {@code from} is checked against. */
    public int size() {
        return current.size();
    }

    /** How many members there are, those joining or leaving included. */
    public int members() {
        Set<String> all = new LinkedHashSet<>(current.names());
        all.addAll(future.names());
        return all.size();
    }

    /** Whether every member, those joining or leaving included, is one {@code test} holds for. */
    public boolean everyMember(Predicate<Member> test) {
        return Stream.concat(current.members().stream(), future.members().stream()).allMatch(test);
    }

    /**
     * The factor as the members that own data now serve it: {@code from} no more than they are.
     * While one of three members pulls its ranges (a wiped or replaced node), a {@code 2/3}
     * request is served by the two owners, and its writes also reach the third: refusing it, as
     * before, refused every such request for the whole rebuild. An {@code ack} beyond the owners
     * cannot be served ({@code EntityRequests} answers 503 to retry).
     */
    public ReplicationFactor served(ReplicationFactor factor) {
        return factor.from() <= size() ? factor : new ReplicationFactor(factor.ack(), size());
    }

    /** The replicas a read of the key asks, its primary first: at most every owner. */
    public List<Replica> readReplicas(byte[] key, int from) {
        return current.replicasFor(key, Math.min(from, size())).stream().map(replicas).toList();
    }

    /**
     * Whether a replica is in the coordinating node's zone ({@link ReplicaPreference}); without a
     * zone here, every replica is.
     */
    public boolean inThisZone(Replica replica) {
        return zone.isEmpty() || zone.equals(current.zoneOf(replica.name()));
    }

    /**
     * The replicas a write of the key goes to: the current owners first (at most every one of
     * them), then any it moves to, up to {@code from} in each ring.
     */
    public List<Replica> writeReplicas(byte[] key, int from) {
        if (future == current && joining.isEmpty()) {
            return readReplicas(key, from);
        }
        Set<String> names = new LinkedHashSet<>(current.replicasFor(key, Math.min(from, size())));
        names.addAll(future.replicasFor(key, Math.min(from, future.size())));
        for (HashRing ring : joining) {
            names.addAll(ring.replicasFor(key, Math.min(from, ring.size())));
        }
        List<Replica> targets = new ArrayList<>(names.size());
        names.forEach(name -> targets.add(replicas.apply(name)));
        return targets;
    }
}
