package io.ringkv.replication;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;

class ReplicaPreferenceTest {

    @Test
    void asksTheFastestFirstAndFailingPeersLast() {
        Map<String, Double> millis = Map.of("down", Double.POSITIVE_INFINITY, "slow", 50.0, "local", 0.0, "fast", 1.5);
        assertThat(ReplicaPreference.cheapestFirst(List.of("down", "slow", "local", "fast"), millis::get, replica -> true))
                .containsExactly("local", "fast", "slow", "down");
    }

    @Test
    void keepsTheRingOrderBetweenEquals() {
        Map<String, Double> millis = Map.of("primary", 2.0, "second", 2.0, "third", 2.0);
        assertThat(ReplicaPreference.cheapestFirst(List.of("primary", "second", "third"), millis::get, replica -> true))
                .containsExactly("primary", "second", "third");
    }

    /** A healthy replica in this node's zone before a faster one elsewhere; a failing or full one last, wherever it is. */
    @Test
    void asksThisZoneFirstWhileItsReplicasAnswer() {
        Map<String, Double> millis = Map.of("other-fast", 0.5, "zone-slow", 8.0, "other-slow", 9.0);
        Set<String> inZone = Set.of("zone-slow");
        assertThat(ReplicaPreference.cheapestFirst(List.of("other-fast", "other-slow", "zone-slow"), millis::get, inZone::contains))
                .containsExactly("zone-slow", "other-fast", "other-slow");

        Map<String, Double> zoneDown = Map.of("other-fast", 0.5, "zone-down", Double.POSITIVE_INFINITY,
                "zone-full", ReplicaPreference.NO_ANSWER_SOON, "other-slow", 9.0);
        Set<String> zone = Set.of("zone-down", "zone-full");
        assertThat(ReplicaPreference.cheapestFirst(List.of("zone-down", "zone-full", "other-slow", "other-fast"), zoneDown::get,
                zone::contains))
                .containsExactly("other-fast", "other-slow", "zone-full", "zone-down");
    }
}
