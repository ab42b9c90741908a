package io.ringkv.replication;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

class ReplicaPreferenceTest {

    @Test
    void asksTheFastestFirstAndFailingPeersLast() {
        Map<String, Double> millis = Map.of("down", Double.POSITIVE_INFINITY, "slow", 50.0, "local", 0.0, "fast", 1.5);
        assertThat(ReplicaPreference.cheapestFirst(List.of("down", "slow", "local", "fast"), millis::get))
                .containsExactly("local", "fast", "slow", "down");
    }

    @Test
    void keepsTheRingOrderBetweenEquals() {
        Map<String, Double> millis = Map.of("primary", 2.0, "second", 2.0, "third", 2.0);
        assertThat(ReplicaPreference.cheapestFirst(List.of("primary", "second", "third"), millis::get))
                .containsExactly("primary", "second", "third");
    }
}
