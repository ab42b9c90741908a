package io.ringkv.replication;

import java.util.Comparator;
import java.util.List;
import java.util.function.ToDoubleFunction;

/**
 * The order in which a read asks a key's replicas. A read needs only {@code ack} answers, so it
 * asks the cheapest {@code ack} replicas first and the others only when one of them fails or is
 * late (Cassandra reads the same way): for {@code 2/3} that is half the network calls of asking
 * all three. Cheapest is this node's own store (no network), then the peers by their recent
 * latency; a peer that is failing or whose breaker is open expects an infinite latency and comes last.
 */
public final class ReplicaPreference {

    private ReplicaPreference() {
    }

    /** The replicas sorted by expected latency; a stable sort, so ties keep the ring's order. */
    public static <R> List<R> cheapestFirst(List<R> replicas, ToDoubleFunction<R> expectedMillis) {
        return replicas.stream().sorted(Comparator.comparingDouble(expectedMillis)).toList();
    }
}
