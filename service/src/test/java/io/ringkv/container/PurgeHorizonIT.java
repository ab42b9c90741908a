package io.ringkv.container;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.extension.TestWatcher;

import io.ringkv.container.RingkvCluster.Node;
import io.ringkv.peer.client.PeerClient;
import io.ringkv.support.PeerTestClient;

/**
 * A node away long enough for its peers to forget it and purge the tombstones of deletes it
 * missed must never hand the deleted values back. Three nodes with DNS discovery and a tombstone
 * grace period of 10 s; 50 keys written to all three; node3 stopped, so that DNS no longer lists
 * it, and every key deleted through the others. They keep the tombstones for a grace period after
 * node3 went, then forget it and purge. node3, started again on its old volume, still holds the
 * values. It must say JOINING (no read asks it, no repair runs with it) and report itself broken,
 * and for four repair intervals no deleted key may read back through any node, nor appear in the
 * others' own stores; neither of them may take node3 as holding data at any moment. Restarted once
 * more (what Kubernetes does when liveness fails), it starts empty, joins, and still no key reads
 * back. Without the check the others' first repair with node3 copies its values back to them.
 */
@ExtendWith(DockerEngineCondition.class)
class PurgeHorizonIT {

    private static final String SECRET = "it-" + UUID.randomUUID();
    private static final int KEYS = 50;
    private static final Duration REPAIR_INTERVAL = Duration.ofSeconds(5);
    private static final Duration WATCHED = REPAIR_INTERVAL.multipliedBy(4);

    private static RingkvCluster cluster;

    @RegisterExtension
    static final TestWatcher printLogsOnFailure = RingkvCluster.printLogsOnFailure(() -> cluster);

    @AfterAll
    static void removeTheCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void aNodeBackAfterItsPeersPurgedTheDeletesItMissedNeverBringsThemBack() throws Exception {
        Map<String, String> environment = new HashMap<>(RingkvCluster.dnsDiscovery(SECRET));
        environment.put("RINGKV_STORAGE_TOMBSTONE_GRACE_PERIOD", "10s");
        environment.put("RINGKV_REPAIR_INTERVAL", REPAIR_INTERVAL.toSeconds() + "s");
        cluster = new RingkvCluster(RingkvImage.name(), SECRET, environment);
        cluster.start("node1", "node2", "node3");
        cluster.awaitRing(Duration.ofSeconds(60), "node1", "node2", "node3");
        Node node1 = cluster.node("node1");
        Node node2 = cluster.node("node2");
        List<Node> others = List.of(node1, node2);
        NodeClient client = new NodeClient();
        for (int i = 0; i < KEYS; i++) {
            assertThat(client.putEntity(node1.api(), key(i), "3/3", "before-" + i).status()).isEqualTo(201);
        }

        cluster.stop("node3");
        Awaitility.await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
            for (Node node : others) {
                assertThat(client.cluster(node.api()).ring()).as("%s's ring", node).containsExactly(node1.name(), node2.name());
            }
        });
        for (int i = 0; i < KEYS; i++) {
            assertThat(client.deleteEntity(node1.api(), key(i), null).status()).isEqualTo(202);
        }
        long deleted = System.nanoTime();
        try (PeerTestClient peers = new PeerTestClient(SECRET)) {
            List<PeerClient> ownStores = others.stream().map(node -> peers.at(node.name(), node.clusterAddress())).toList();
            // A grace period after node3 went and after the deletes, and a repair between node1 and node2 since.
            Awaitility.await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofSeconds(1))
                    .untilAsserted(() -> assertNoKeyIn(ownStores));
            System.out.printf("[container tests] node1 and node2 purged the tombstones %d ms after the deletes%n",
                    Duration.ofNanos(System.nanoTime() - deleted).toMillis());

            Node node3 = cluster.recreateUnready("node3");
            // From its first answer on, node3 may refuse (503: it has not found its members yet) but
            // never hand a value back, not even before its ring and its check are done.
            // Any other answer is collected and fails the test: the wait retries only what is not there yet.
            AtomicInteger refused = new AtomicInteger();
            List<String> wrong = new CopyOnWriteArrayList<>();
            Awaitility.await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100)).untilAsserted(() -> {
                for (int i = 0; i < KEYS; i += 10) {
                    int status = client.getEntity(node3.api(), key(i), null).status();
                    if (status == 503) {
                        refused.incrementAndGet();
                    } else if (status != 404) {
                        wrong.add(key(i) + " through node3 while it starts: " + status);
                    }
                }
                for (Node node : others) {
                    var view = client.cluster(node.api());
                    // node3 answers a PING from a peer not on its ring yet with the state it started in
                    // (it does not look at that peer's horizon): the peer must not take it as NORMAL.
                    view.members().stream().filter(member -> member.name().equals(node3.name()) && !member.dataState().equals("JOINING"))
                            .forEach(member -> wrong.add(node + " took node3 as " + member.dataState() + ": " + view));
                    assertThat(view.ring()).as("%s's ring: %s", node, view).hasSize(3);
                    assertThat(view.members()).filteredOn(member -> member.name().equals(node3.name()))
                            .extracting(NodeClient.Member::dataState).as("node3 on %s: %s", node, view).containsExactly("JOINING");
                }
                var own = client.cluster(node3.api());
                assertThat(own.known()).as("node3 found its members: %s", own).isTrue();
                assertThat(client.get(node3.management(), "/actuator/health/liveness").status())
                        .as("node3 reports itself broken, for Kubernetes to restart it").isEqualTo(503);
            });
            assertThat(wrong).as("deleted values read back, or node3 taken as holding data").isEmpty();
            System.out.printf("[container tests] node3 refused %d reads while it had not found its members yet%n", refused.get());
            assertThat(node3.logs()).contains("purged tombstones below timestamp");

            long until = System.nanoTime() + WATCHED.toNanos();
            int reads = 0;
            while (System.nanoTime() < until) {
                for (Node node : List.of(node1, node2, node3)) {
                    for (int i = 0; i < KEYS; i++) {
                        assertThat(client.getEntity(node.api(), key(i), null).status()).as("%s through %s", key(i), node).isEqualTo(404);
                        reads++;
                    }
                }
                assertNoKeyIn(ownStores);
                Thread.sleep(1_000);
            }
            System.out.printf("[container tests] node3, back after its peers purged %d deletes it missed, stayed JOINING and"
                    + " broken; %d reads through the three over %d s found none of the values%n", KEYS, reads, WATCHED.toSeconds());

            Node restarted = cluster.recreate("node3");
            cluster.awaitRing(Duration.ofSeconds(60), "node1", "node2", "node3");
            assertThat(restarted.logs()).contains("this volume belonged to a node that left the cluster");
            assertNoKeyIn(List.of(peers.at(restarted.name(), restarted.clusterAddress())));
            for (int i = 0; i < KEYS; i++) {
                assertThat(client.getEntity(restarted.api(), key(i), "3/3").status()).as(key(i)).isEqualTo(404);
            }
        }
    }

    private static void assertNoKeyIn(List<PeerClient> stores) {
        for (PeerClient store : stores) {
            for (int i = 0; i < KEYS; i++) {
                assertThat(store.read(bytes(key(i))).block(Duration.ofSeconds(10))).as("%s, read alone", key(i)).isEmpty();
            }
        }
    }

    private static String key(int i) {
        return "purged-" + i;
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
