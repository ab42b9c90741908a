package io.ringkv.replication;

import java.util.Comparator;
import java.util.List;
import java.util.function.Predicate;
import java.util.function.ToDoubleFunction;

/**
 * The order in which a read asks a key's replicas. A read needs only {@code ack} answers, so it
 * asks the first {@code ack} replicas of this order and the others only when one of them fails or
 * is late (Cassandra reads the same way): for {@code 2/3} that is half the network calls of asking
 * all three.
 *
 * <p>First the replicas in this node's zone, then the others, each by expected latency: this
 * node's own store (no network) first, then the peers by their recent latency. A peer that is
 * failing, whose breaker is open or whose window is full expects no answer soon
 * ({@link #NO_ANSWER_SOON}) and comes last, wherever it is. So a {@code 1/3} read stays in the
 * zone, and a {@code 2/3} read asks a replica there first, whenever one is healthy: traffic across
 * zones costs money and latency (cloud providers bill it), and a zone's replicas are usually the
 * nearest anyway. Without zones, every replica is in "the" zone and the order is by latency alone.
 */
public final class ReplicaPreference {

    /** What a replica that will not answer soon expects: failing, breaker open, or its window full. */
    public static final double NO_ANSWER_SOON = Double.MAX_VALUE;

    private ReplicaPreference() {
    }

    /** The replicas in that order; a stable sort, so ties keep the ring's order. */
    public static <R> List<R> cheapestFirst(List<R> replicas, ToDoubleFunction<R> expectedMillis, Predicate<R> inThisZone) {
        Comparator<R> order = Comparator.<R, Boolean>comparing(replica -> expectedMillis.applyAsDouble(replica) >= NO_ANSWER_SOON)
                .thenComparing(replica -> !inThisZone.test(replica))
                .thenComparingDouble(expectedMillis);
        return replicas.stream().sorted(order).toList();
    }
}
