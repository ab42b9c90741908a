package io.ringkv.discovery;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.junit.jupiter.api.Test;

import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import io.ringkv.ring.RememberedZones;
import io.ringkv.ring.ClusterMembership;
import io.ringkv.ring.HashRing;
import io.ringkv.ring.Member;

/**
 * A node with a new store among listed peers knows its ring only once each peer has told its
 * state or failed: what decides whether it pulls before it serves. A peer that does not answer
 * ends the round as a failure, and is not waited for.
 */
class StaticPeersTest {

    @Test
    void theRingIsKnownOnceEveryPeerAnsweredOrFailed() {
        var membership = ClusterMembership.fixedJoining(Member.named("a"), Member.named(List.of("a", "b", "c")), 16, RememberedZones.NONE);
        Map<String, Sinks.One<Optional<Member>>> probes = new ConcurrentHashMap<>();
        var peers = new StaticPeers(membership, Duration.ofSeconds(5),
                member -> probes.computeIfAbsent(member, name -> Sinks.one()).asMono());

        peers.round().subscribe();
        assertThat(probes.keySet()).as("every peer, not itself").isEqualTo(Set.of("b", "c"));

        probes.get("b").tryEmitValue(Optional.of(Member.named("b")));
        assertThat(membership.isKnown()).as("c has neither answered nor failed yet").isFalse();
        probes.get("c").tryEmitValue(Optional.empty());
        assertThat(membership.isKnown()).as("c failed: not waited for").isTrue();
    }

    @Test
    void aNodeAloneKnowsItsRingAtOnce() {
        var membership = ClusterMembership.fixedJoining(Member.named("a"), Member.named(List.of("a")), 16, RememberedZones.NONE);
        new StaticPeers(membership, Duration.ofSeconds(5), member -> Mono.just(Optional.of(Member.named(member)))).round().block(Duration.ofSeconds(1));
        assertThat(membership.isKnown()).isTrue();
        assertThat(membership.othersHoldData()).isFalse();
    }

    /**
     * A static list names the members; what each is besides (its zone) it tells when it answers.
     * A zone told places replicas across zones (HashRing): a new version of the ring, which keeps
     * every key's primary.
     */
    @Test
    void theRingTakesWhatEachPeerTellsOfItselfAndKeepsItsPrimaries() {
        var membership = ClusterMembership.fixed(Member.inZone("a", "zone-a"), Member.named(List.of("a", "b", "c")), 16);
        HashRing before = membership.ring();
        new StaticPeers(membership, Duration.ofSeconds(5),
                member -> Mono.just(member.equals("b") ? Optional.of(Member.inZone("b", "zone-b")) : Optional.<Member>empty()))
                .round().block(Duration.ofSeconds(1));

        assertThat(membership.ring().members()).containsExactly(Member.inZone("a", "zone-a"), Member.inZone("b", "zone-b"),
                Member.named("c"));
        assertThat(membership.view().version()).as("a zone places keys: a new version").isEqualTo(2);
        for (int i = 0; i < 1000; i++) {
            byte[] key = ("k" + i).getBytes();
            assertThat(membership.ring().replicasFor(key, 1)).isEqualTo(before.replicasFor(key, 1));
        }
    }
}
