package io.ringkv.startup;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.function.IntSupplier;
import java.util.function.Supplier;
import java.util.stream.IntStream;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.ringkv.lifecycle.Polling;
import io.ringkv.peer.client.ClientSecurity;
import io.ringkv.replication.Coordinator;
import io.ringkv.replication.RemoteReplica;
import io.ringkv.replication.ReplicaDirectory;
import io.ringkv.replication.ReplicationFactor;
import io.ringkv.ring.ClusterMembership;
import io.ringkv.security.RequestCredential;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;

/**
 * What a node does between starting its servers and reporting ready: it tells its peers it is up,
 * then warms its own request path. Spring Boot marks a node ready only once its runners are done,
 * and {@code GET /v0/status} answers 200 only once it is ready, so a client never meets a node its
 * peers still shun or whose first requests would meet a cold JIT (seconds of p99 above a second
 * on two cores).
 *
 * <p>Telling the peers: one ping to each, all at once, around the breakers. The ping tells this
 * node's cluster port, which may differ from the last run's (a free one by default); a peer
 * takes it, and readmits this node if it shunned it, before it answers, so by the time this node
 * is ready every peer that answered calls it again, at the right port. A peer that does not
 * answer (down, hung, frozen) costs at most {@code peerTimeout} and is left out of the rest:
 * readiness never waits on another pod.
 *
 * <p>Warming: GETs through the public HTTP API of keys this node is the first replica of (answered
 * 404 from its own store), and writes and deletes of keys it owns alone, made through the
 * coordinator with a leading NUL byte, which the API refuses in client ids: neither can collide
 * with a client's. Then each peer that answered the ping gets a few reads and ancient tombstones
 * of such keys ({@link RemoteReplica#warmUp}), which warm both ends of the node-to-node protocol,
 * until its first failure. None of it goes through the breakers, which must not learn from a
 * warm-up. The whole is bounded by {@code budget}.
 */
public final class WarmUp implements ApplicationRunner {

    private static final Logger log = LoggerFactory.getLogger(WarmUp.class);
    private static final ReplicationFactor ONE = new ReplicationFactor(1, 1);
    private static final byte[] VALUE = new byte[1024];

    /**
     * @param requests    how many of each kind (0: no warm-up; the peers are still told)
     * @param budget      the longest it may take; readiness does not wait longer
     * @param peerTimeout the longest a peer may take to answer the ping: the replication timeout
     */
    public record Settings(int requests, Duration budget, Duration peerTimeout) {
    }

    private final Coordinator coordinator;
    private final ClusterMembership membership;
    private final ReplicaDirectory replicas;
    private final IntSupplier httpPort;
    private final ClientSecurity security;
    private final Supplier<RequestCredential> credential;
    private final Settings settings;

    /**
     * @param httpPort   the port the public API listens on, known once it started
     * @param security   how that port is called: over TLS when the node speaks it
     * @param credential what the warm-up's requests carry: with client authentication on, a read
     *                   token of the node's own, revoked once the warm-up is over
     */
    public WarmUp(Coordinator coordinator, ClusterMembership membership, ReplicaDirectory replicas, IntSupplier httpPort,
            ClientSecurity security, Supplier<RequestCredential> credential, Settings settings) {
        this.coordinator = coordinator;
        this.membership = membership;
        this.replicas = replicas;
        this.httpPort = httpPort;
        this.security = security;
        this.credential = credential;
        this.settings = settings;
    }

    @Override
    public void run(ApplicationArguments arguments) {
        long waitedFrom = System.nanoTime();
        if (!ringKnownWithin(settings.budget())) {
            log.warn("the ring was not known within {} (ringkv.startup.warm-up-timeout): no warm-up", settings.budget());
            return;
        }
        long started = System.nanoTime();
        List<RemoteReplica> answered = greetPeers();
        if (settings.requests() == 0) {
            return;
        }
        Duration left = settings.budget().minusNanos(System.nanoTime() - waitedFrom);
        List<String> reads = ownKeys("ringkv-warm-up-", settings.requests());
        List<String> writes = ownKeys("\u0000ringkv-warm-up-", settings.requests());
        RequestCredential credential = this.credential.get();
        HttpClient http = security.secure(HttpClient.create())
                .baseUrl(security.scheme() + "://127.0.0.1:" + httpPort.getAsInt()).responseTimeout(Duration.ofSeconds(5))
                .headers(headers -> credential.authorization().ifPresent(value -> headers.set(HttpHeaderNames.AUTHORIZATION, value)));
        Flux<Object> readPath = Flux.fromIterable(reads)
                .flatMap(key -> http.get().uri("/v0/entity?id=" + key + "&replicas=1/1")
                        .responseSingle((response, body) -> body.then(Mono.just(response.status().code()))), 8)
                .cast(Object.class);
        Flux<Object> writePath = Flux.fromIterable(writes)
                .flatMap(key -> {
                    byte[] bytes = key.getBytes(StandardCharsets.UTF_8);
                    var placement = coordinator.placement();
                    return coordinator.put(bytes, VALUE, ONE, placement).then(coordinator.delete(bytes, ONE, placement));
                }, 8)
                .cast(Object.class);
        // Each peer that answered, until its first failure: a peer that fails now is not waited for again.
        List<String> peerKeys = writes.subList(0, Math.min(writes.size(), settings.requests() / 10));
        Flux<Object> peerPath = Flux.fromIterable(answered)
                .flatMap(peer -> Flux.fromIterable(peerKeys)
                        .concatMap(key -> peer.warmUp(key.getBytes(StandardCharsets.UTF_8)))
                        .onErrorResume(error -> {
                            log.info("warm-up: {} failed ({}); not warmed further", peer.name(), error.toString());
                            return Mono.empty();
                        }))
                .cast(Object.class);
        try {
            Flux.merge(readPath, writePath, peerPath).onErrorResume(error -> {
                log.debug("a warm-up request failed: {}", error.toString());
                return Mono.empty();
            }).then().block(left);
            log.info("warmed the request path with {} reads and {} writes in {} ms", reads.size(), writes.size(),
                    Duration.ofNanos(System.nanoTime() - started).toMillis());
        } catch (IllegalStateException timeout) {
            log.warn("the warm-up did not finish within {}: ready anyway", settings.budget());
        } finally {
            credential.close();
        }
    }

    /** Pings every peer at once, each within the peer timeout; the peers that answered. */
    private List<RemoteReplica> greetPeers() {
        List<RemoteReplica> peers = replicas.peers();
        List<RemoteReplica> answered = Flux.fromIterable(peers)
                .flatMap(peer -> peer.greet()
                        .timeout(settings.peerTimeout(), Mono.just(false))
                        .filter(Boolean::booleanValue)
                        .map(ok -> peer))
                .collectList()
                // Each ping is bounded already; this only keeps a bug from holding readiness.
                .timeout(settings.peerTimeout().multipliedBy(3), Mono.just(List.of()))
                .block();
        List<String> silent = peers.stream().filter(peer -> !answered.contains(peer)).map(RemoteReplica::name).toList();
        log.info("told {} of {} peers this node is up{}", answered.size(), peers.size(), silent.isEmpty() ? ""
                : "; not reached within " + settings.peerTimeout().toMillis() + " ms: " + silent + " (they learn it when this node next calls them)");
        return answered;
    }

    /**
     * Waits for discovery to find the members: until then the node refuses requests, and neither
     * the keys it owns nor its peers are known. Readiness waits for the ring as well, so the node
     * is ready at most the warm-up's length later than if both ran side by side.
     */
    private boolean ringKnownWithin(Duration max) {
        try {
            return Polling.await(membership::isKnown, max, Duration.ofMillis(50));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** Keys whose first replica is this node, so that serving them involves no peer. */
    private List<String> ownKeys(String prefix, int count) {
        var ring = membership.ring();
        String self = membership.self();
        return IntStream.iterate(0, i -> i + 1)
                .mapToObj(i -> prefix + i)
                .filter(key -> ring.replicasFor(key.getBytes(StandardCharsets.UTF_8), 1).get(0).equals(self))
                .limit(count)
                .toList();
    }
}
