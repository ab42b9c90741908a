package io.ringkv.startup;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.function.IntSupplier;
import java.util.stream.IntStream;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;

import io.ringkv.replication.Coordinator;
import io.ringkv.replication.RemoteReplica;
import io.ringkv.replication.ReplicaDirectory;
import io.ringkv.replication.ReplicationFactor;
import io.ringkv.ring.ClusterMembership;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;

/**
 * Warms the node's own request path before it reports ready: Spring Boot marks a node ready only
 * once its runners are done, so the first burst of just-in-time compilation that live traffic
 * would otherwise meet (seconds of p99 above a second on two cores) happens here instead.
 *
 * <p>Two kinds of request, neither of which a client can see or collide with: GETs through the
 * public HTTP API of keys this node is the first replica of (answered 404 from its own store), and
 * writes and deletes of keys it owns alone, made through the coordinator with a leading NUL byte,
 * which the API refuses in client ids. Then each peer that is up gets a few pings, reads and
 * ancient tombstones of such keys ({@link RemoteReplica#warmUp}), which open the connections and
 * warm both ends of the node-to-node protocol; that goes around the peers' circuit breakers, which
 * must not learn from a warm-up (at a cold start the peers may not be up yet).
 */
public final class WarmUp implements ApplicationRunner {

    private static final Logger log = LoggerFactory.getLogger(WarmUp.class);
    private static final ReplicationFactor ONE = new ReplicationFactor(1, 1);
    private static final byte[] VALUE = new byte[1024];

    private final Coordinator coordinator;
    private final ClusterMembership membership;
    private final ReplicaDirectory replicas;
    private final IntSupplier httpPort;
    private final int requests;
    private final Duration budget;

    /**
     * @param requests how many of each kind (0: no warm-up)
     * @param budget   the longest it may take; readiness does not wait longer
     */
    public WarmUp(Coordinator coordinator, ClusterMembership membership, ReplicaDirectory replicas, IntSupplier httpPort,
            int requests, Duration budget) {
        this.coordinator = coordinator;
        this.membership = membership;
        this.replicas = replicas;
        this.httpPort = httpPort;
        this.requests = requests;
        this.budget = budget;
    }

    @Override
    public void run(ApplicationArguments arguments) {
        if (requests == 0) {
            return;
        }
        long waitedFrom = System.nanoTime();
        if (!ringKnownWithin(budget)) {
            log.warn("the ring was not known within {} (ringkv.startup.warm-up-timeout): no warm-up", budget);
            return;
        }
        long started = System.nanoTime();
        Duration left = budget.minusNanos(started - waitedFrom);
        List<String> reads = ownKeys("ringkv-warm-up-", requests);
        List<String> writes = ownKeys("\u0000ringkv-warm-up-", requests);
        HttpClient http = HttpClient.create().baseUrl("http://127.0.0.1:" + httpPort.getAsInt()).responseTimeout(Duration.ofSeconds(5));
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
        // Peers: their connections opened and both ends of the protocol exercised, outside the
        // breakers. A peer that is not up yet is skipped.
        Flux<Object> peerPath = Flux.fromIterable(replicas.peers())
                .flatMap(peer -> Flux.fromIterable(writes.subList(0, Math.min(writes.size(), requests / 10)))
                        .concatMap(key -> peer.warmUp(key.getBytes(StandardCharsets.UTF_8))))
                .cast(Object.class);
        try {
            Flux.merge(readPath, writePath, peerPath).onErrorResume(error -> {
                log.debug("a warm-up request failed: {}", error.toString());
                return Mono.empty();
            }).then().block(left);
            log.info("warmed the request path with {} reads and {} writes in {} ms", reads.size(), writes.size(),
                    Duration.ofNanos(System.nanoTime() - started).toMillis());
        } catch (IllegalStateException timeout) {
            log.warn("the warm-up did not finish within {}: ready anyway", budget);
        }
    }

    /**
     * Waits for discovery to find the members: until then the node refuses requests, and neither
     * the keys it owns nor its peers are known. Readiness waits for the ring as well, so the node
     * is ready at most the warm-up's length later than if both ran side by side.
     */
    private boolean ringKnownWithin(Duration max) {
        long deadline = System.nanoTime() + max.toNanos();
        while (!membership.isKnown()) {
            if (System.nanoTime() - deadline >= 0) {
                return false;
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return true;
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
