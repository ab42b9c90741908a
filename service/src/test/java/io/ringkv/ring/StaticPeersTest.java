package io.ringkv.ring;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.junit.jupiter.api.Test;

import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * A node with a new store among listed peers knows its ring only once each peer has told its
 * state or failed: what decides whether it pulls before it serves. A peer that does not answer
 * ends the round as a failure, and is not waited for.
 */
class StaticPeersTest {

    @Test
    void theRingIsKnownOnceEveryPeerAnsweredOrFailed() {
        var membership = ClusterMembership.fixedJoining("a", List.of("a", "b", "c"), 16);
        Map<String, Sinks.One<Boolean>> probes = new ConcurrentHashMap<>();
        var peers = new StaticPeers(membership, Duration.ofSeconds(5),
                member -> probes.computeIfAbsent(member, name -> Sinks.one()).asMono());

        peers.round().subscribe();
        assertThat(probes.keySet()).as("every peer, not itself").isEqualTo(Set.of("b", "c"));

        probes.get("b").tryEmitValue(true);
        assertThat(membership.isKnown()).as("c has neither answered nor failed yet").isFalse();
        probes.get("c").tryEmitValue(false);
        assertThat(membership.isKnown()).as("c failed: not waited for").isTrue();
    }

    @Test
    void aNodeAloneKnowsItsRingAtOnce() {
        var membership = ClusterMembership.fixedJoining("a", List.of("a"), 16);
        new StaticPeers(membership, Duration.ofSeconds(5), member -> Mono.just(true)).round().block(Duration.ofSeconds(1));
        assertThat(membership.isKnown()).isTrue();
        assertThat(membership.othersHoldData()).isFalse();
    }
}
