package io.ringkv.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.IntStream;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.http.HttpStatus;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.util.FileSystemUtils;

import io.micrometer.core.instrument.MeterRegistry;
import io.ringkv.repair.RepairScheduler;

import io.ringkv.record.LastWriteWins;
import io.ringkv.record.Record;
import io.ringkv.ring.ClusterMembership;
import io.ringkv.ring.MemberState;
import io.ringkv.support.TestCluster;
import io.ringkv.support.TestNode;
import reactor.core.publisher.Flux;

/**
 * A node of a static peer list whose data directory was emptied, among peers that hold data: it
 * pulls its ranges before it serves them. Meanwhile it is JOINING on every node, so that no read
 * counts its empty store, and still coordinates through its peers; it is NORMAL on every node the
 * moment it is ready.
 */
class EmptiedNodeTest {

    private static final int KEYS = 300;

    @TempDir
    Path dataRoot;

    @Test
    void anEmptiedNodeIsJoiningEverywhereUntilItHoldsItsRangesThenNormalEverywhereAtOnce() throws IOException {
        // No anti-entropy: what the emptied node holds, it pulled. Probe rounds a minute apart: a
        // state the peers hear within seconds, they heard from the node's own pings.
        try (TestCluster cluster = TestCluster.start(3, dataRoot,
                Map.of("ringkv.repair.enabled", "false", "ringkv.cluster.discovery.refresh-interval", "60s"))) {
            List<String> keys = IntStream.range(0, KEYS).mapToObj(i -> "key-" + i).toList();
            for (String key : keys) {
                cluster.client(0).put().uri("/v0/entity?id=" + key + "&replicas=3/3").bodyValue(("value of " + key).getBytes())
                        .exchange().expectStatus().isCreated();
            }
            // Values that expire travel with their expiry, those expired already too (they hide older versions).
            List<String> expiring = IntStream.range(0, 20).mapToObj(i -> "expiring-" + i).toList();
            for (String key : expiring) {
                cluster.client(0).put().uri("/v0/entity?id=" + key + "&replicas=3/3&ttl=" + (key.endsWith("0") ? "1ms" : "1h"))
                        .bodyValue(key.getBytes()).exchange().expectStatus().isCreated();
            }
            TestNode emptied = cluster.node(2);
            emptied.stop();
            assertThat(FileSystemUtils.deleteRecursively(dataRoot.resolve("node2"))).as("deleted").isTrue();

            // Slowed so that the pull of about 10 KB takes seconds.
            try (TestNode back = emptied.withSettings(Map.of("ringkv.repair.rate", "2KB")).startJoining()) {
                var ownView = back.bean(ClusterMembership.class);
                assertThat(ownView.state(back.url())).isEqualTo(MemberState.JOINING);
                back.client().get().uri("/v0/status").exchange().expectStatus().isEqualTo(HttpStatus.SERVICE_UNAVAILABLE);
                for (int peer = 0; peer < 2; peer++) {
                    assertThat(cluster.node(peer).bean(ClusterMembership.class).state(back.url()))
                            .as("node %d's view while it pulls", peer).isEqualTo(MemberState.JOINING);
                }
                // It coordinates through the two that hold data, a from of three included; three
                // acknowledgements it cannot offer yet.
                back.client().get().uri("/v0/entity?id=key-0").exchange()
                        .expectStatus().isOk().expectBody(String.class).isEqualTo("value of key-0");
                back.client().get().uri("/v0/entity?id=key-0&replicas=2/3").exchange()
                        .expectStatus().isOk().expectBody(String.class).isEqualTo("value of key-0");
                back.client().get().uri("/v0/entity?id=key-0&replicas=3/3").exchange()
                        .expectStatus().isEqualTo(HttpStatus.SERVICE_UNAVAILABLE);

                Awaitility.await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(10))
                        .until(() -> ownView.state(back.url()).holdsData());
                for (int peer = 0; peer < 2; peer++) {
                    var peerView = cluster.node(peer).bean(ClusterMembership.class);
                    Awaitility.await("node " + peer + "'s view once it is ready, well before its next probe")
                            .atMost(Duration.ofSeconds(2)).pollInterval(Duration.ofMillis(10))
                            .until(() -> peerView.state(back.url()) == MemberState.NORMAL);
                }
                assertThat(keys.stream().filter(key -> back.stored(key).isEmpty()).toList()).as("keys its own store lacks").isEmpty();
                for (String key : expiring) {
                    assertThat(back.stored(key)).as(key).isEqualTo(cluster.node(0).stored(key)).isPresent()
                            .hasValueSatisfying(record -> assertThat(record.expiresAt()).isNotEqualTo(Record.NEVER));
                }
            }
        }
    }

    /**
     * With more keys than a leaf of the digest walk, the emptied node pulls its share whole, in one
     * stream from a peer's scan, rather than key by key; what clients write meanwhile (it takes
     * writes while it pulls) is settled by the walk that follows. Afterwards it holds, for every
     * key, the newest version its peers hold: values, overwrites and tombstones alike.
     */
    @Test
    void anEmptiedNodeWithManyKeysToPullPullsThemWholeAndMissesNothingWrittenMeanwhile() throws IOException {
        int keys = 3000;
        try (TestCluster cluster = TestCluster.start(3, dataRoot,
                Map.of("ringkv.repair.enabled", "false", "ringkv.cluster.discovery.refresh-interval", "60s"))) {
            WebClient coordinator = WebClient.create(cluster.node(0).url());
            Flux.range(0, keys)
                    .flatMap(i -> coordinator.put().uri("/v0/entity?id=many-{i}&replicas=3/3", i).bodyValue(new byte[100])
                            .retrieve().toBodilessEntity(), 16)
                    .blockLast(Duration.ofSeconds(60));
            Flux.range(0, keys / 10)
                    .flatMap(i -> coordinator.delete().uri("/v0/entity?id=many-{i}&replicas=3/3", 10 * i)
                            .retrieve().toBodilessEntity(), 16)
                    .blockLast(Duration.ofSeconds(60));
            TestNode emptied = cluster.node(2);
            emptied.stop();
            assertThat(FileSystemUtils.deleteRecursively(dataRoot.resolve("node2"))).as("deleted").isTrue();

            // Slowed so that the pull of about 400 KB takes seconds, while the writes below land.
            try (TestNode back = emptied.withSettings(Map.of("ringkv.repair.rate", "64KB")).startJoining()) {
                var ownView = back.bean(ClusterMembership.class);
                Flux.range(0, 200)
                        .concatMap(i -> coordinator.put().uri("/v0/entity?id=many-{i}&replicas=2/3", 7 * i)
                                .bodyValue(("meanwhile " + i).getBytes()).retrieve().toBodilessEntity())
                        .blockLast(Duration.ofSeconds(60));
                assertThat(ownView.state(back.url())).as("the writes landed while it pulled").isEqualTo(MemberState.JOINING);
                Awaitility.await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(10))
                        .until(() -> ownView.state(back.url()).holdsData());

                assertThat(back.bean(MeterRegistry.class).get("ringkv.repair.intervals.whole").counter().count())
                        .as("intervals pulled whole").isPositive();
                List<String> differing = IntStream.range(0, keys).mapToObj(i -> "many-" + i)
                        .filter(key -> !back.stored(key).equals(newest(cluster.node(0).stored(key), cluster.node(1).stored(key))))
                        .toList();
                assertThat(differing).as("keys whose newest version the rebuilt store lacks").isEmpty();
            }
        }
    }

    /**
     * Its peers leave the emptied node to its own pull: no anti-entropy repair with it starts while
     * it is JOINING (one would send its share a second time), however often they fall due, and even
     * on a peer that has not heard it say so yet (it may not have noticed the node was down): a
     * repair starts only once the peer has asked it for its state.
     */
    @Test
    void itsPeersDoNotRepairWithItWhileItPulls() throws IOException {
        // Probe rounds a minute apart: the stale view set below stays until a repair asks.
        try (TestCluster cluster = TestCluster.start(3, dataRoot,
                Map.of("ringkv.repair.interval", "1s", "ringkv.cluster.discovery.refresh-interval", "60s"))) {
            for (int i = 0; i < KEYS; i++) {
                cluster.client(0).put().uri("/v0/entity?id=key-" + i + "&replicas=3/3").bodyValue(("value " + i).getBytes())
                        .exchange().expectStatus().isCreated();
            }
            TestNode emptied = cluster.node(2);
            emptied.stop();
            assertThat(FileSystemUtils.deleteRecursively(dataRoot.resolve("node2"))).as("deleted").isTrue();

            // Slowed so that the pull takes seconds: several of the peers' repair rounds fall due meanwhile.
            try (TestNode back = emptied.withSettings(Map.of("ringkv.repair.rate", "2KB")).startJoining()) {
                // From when it listens: a peer's round that fell due while it was down found nothing
                // listening ("Connection refused"), which is no repair with it.
                long restarted = System.currentTimeMillis();
                var ownView = back.bean(ClusterMembership.class);
                List<RepairScheduler> peers = List.of(cluster.node(0).bean(RepairScheduler.class), cluster.node(1).bean(RepairScheduler.class));
                // Node 0 as if it had missed the restart, and asked to repair with the node at once.
                var staleView = cluster.node(0).bean(ClusterMembership.class);
                staleView.setState(back.url(), MemberState.NORMAL);
                peers.get(0).requestRepair(back.url());
                long polls = 0;
                boolean heardJoining = false;
                while (!ownView.state(back.url()).holdsData()) {
                    heardJoining |= staleView.state(back.url()) == MemberState.JOINING;
                    for (RepairScheduler peer : peers) {
                        var running = peer.status().running();
                        assertThat(running == null ? null : running.peer()).as("a peer's repair running").isNotEqualTo(back.url());
                        assertThat(peer.status().recent()).as("repairs with it since it restarted")
                                .noneMatch(done -> done.peer().equals(back.url()) && done.startedMillis() >= restarted);
                    }
                    polls++;
                    Thread.sleep(10);
                }
                assertThat(polls * 10).as("ms it pulled").isGreaterThan(3000);
                assertThat(heardJoining).as("node 0 heard it joining when it went to repair with it").isTrue();
                // Once it holds data, the repairs with it come back.
                for (RepairScheduler peer : peers) {
                    Awaitility.await().atMost(Duration.ofSeconds(30)).until(() ->
                            peer.status().recent().stream().anyMatch(done -> done.peer().equals(back.url()) && done.startedMillis() >= restarted));
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }

    private static Optional<Record> newest(Optional<Record> one, Optional<Record> other) {
        if (one.isEmpty() || other.isEmpty()) {
            return one.isPresent() ? one : other;
        }
        return LastWriteWins.ORDER.compare(one.get(), other.get()) >= 0 ? one : other;
    }
}
