package io.ringkv.container;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.extension.TestWatcher;

import io.ringkv.container.NodeClient.ClusterView;
import io.ringkv.container.NodeClient.Member;
import io.ringkv.container.RingkvCluster.Node;
import io.ringkv.peer.wire.PeerException;
import io.ringkv.record.Record;
import io.ringkv.ring.HashRing;
import io.ringkv.support.PeerTestClient;
import io.ringkv.support.ReplicaCensus;
import io.ringkv.support.WriteHistory;

/**
 * Nodes in containers find each other through DNS, as in Kubernetes: each node has a stable name
 * of its own ({@code http://nodeN:8080}, its hostname and network alias, like a StatefulSet pod)
 * and every node answers to the shared alias {@code ringkv} (like a headless Service). One cluster
 * serves all the tests, in order: it starts with three nodes in two zones, loses one and gets it
 * back on a new address, grows to four under load with the fourth in a third zone and shrinks
 * back to three, and takes a fifth while node3 hangs.
 *
 * <p>On a failure, the tail of every node's log is printed.
 */
@ExtendWith(DockerEngineCondition.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class DnsDiscoveryIT {

    private static final String SECRET = "it-" + UUID.randomUUID();
    private static final Duration AGREEMENT = Duration.ofSeconds(60);
    /** How long the others may take to report a stopped node unreachable. */
    private static final Duration REPORTED_DOWN = Duration.ofSeconds(20);
    /** How long a member gone from DNS may stay on the ring: five rounds of one second, and then some. */
    private static final Duration DAMPING = Duration.ofSeconds(30);
    private static final Set<String> UNREACHABLE = Set.of("DOWN", "SUSPECT");
    private static final int JOIN_KEYS = 200;
    /** How long a joining node waits for an owner it cannot reach (ringkv.cluster.join.owner-wait). */
    private static final Duration OWNER_WAIT = Duration.ofSeconds(10);

    /** The zone of each node: two zones to begin with, a third for the nodes that join later. */
    private static final Map<String, String> ZONES = Map.of("node1", "zone-a", "node2", "zone-b", "node3", "zone-a",
            "node4", "zone-c", "node5", "zone-c");
    /** Writes acknowledged under load before the fourth node starts, and after it joined. */
    private static final int LOAD_AROUND_JOIN = 300;

    private static RingkvCluster cluster;
    private static final NodeClient client = new NodeClient();

    @RegisterExtension
    static final TestWatcher printLogsOnFailure = RingkvCluster.printLogsOnFailure(() -> cluster);

    @BeforeAll
    static void startThreeNodes() {
        String image = RingkvImage.name();
        Map<String, String> environment = new LinkedHashMap<>(RingkvCluster.dnsDiscovery(SECRET));
        environment.put("RINGKV_CLUSTER_JOIN_OWNER_WAIT", OWNER_WAIT.toSeconds() + "s");
        cluster = new RingkvCluster(image, SECRET, environment);
        CompletableFuture<List<Node>> zoneB = CompletableFuture.supplyAsync(() -> cluster.start(inZone("node2"), "node2"));
        cluster.start(inZone("node1"), "node1", "node3");
        zoneB.join();
    }

    /** The setting that puts a node (node1 and node3 alike) in its zone. */
    private static Map<String, String> inZone(String host) {
        return Map.of("RINGKV_CLUSTER_ZONE", ZONES.get(host));
    }

    /** Members by their names ({@code http://nodeN:8080}), each in its node's zone. */
    private static List<io.ringkv.ring.Member> zoned(List<String> names) {
        return names.stream().map(name -> io.ringkv.ring.Member.inZone(name, ZONES.get(URI.create(name).getHost()))).toList();
    }

    @AfterAll
    static void removeTheCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    @Order(1)
    void threeNodesFindEachOtherThroughDnsAndAgreeOnOneRing() {
        cluster.awaitRing(AGREEMENT, "node1", "node2", "node3");
        for (Node node : cluster.running()) {
            ClusterView view = client.cluster(node.api());
            assertThat(view.self()).as("self of %s in %s", node, view).isEqualTo(node.name());
            assertThat(view.version()).as("version of %s in %s", node, view).isPositive();
        }
    }

    @Test
    @Order(2)
    void everyNodeServesEveryKey() {
        List<String> keys = new ArrayList<>();
        for (Node writer : cluster.running()) {
            for (int i = 0; i < 10; i++) {
                String key = "key-" + writer.host() + "-" + i;
                expect(client.putEntity(writer.api(), key, null, value(key)), 201, "PUT %s via %s", key, writer);
                keys.add(key);
            }
        }
        for (Node reader : cluster.running()) {
            for (String key : keys) {
                assertRead(reader, key, null);
            }
        }
        // On every node, for the tests that follow.
        putEverywhere("everywhere");
        for (Node reader : cluster.running()) {
            assertRead(reader, "everywhere", "3/3");
        }
    }

    @Test
    @Order(3)
    void peersMustProveTheClusterSecretAndThePublicPortHasNoInternalEndpoints() {
        for (Node node : cluster.running()) {
            for (String path : List.of("/internal/v0/record?id=everywhere", "/internal/v0/identity")) {
                expect(client.get(node.api(), path), 404, "GET %s on %s (the public port)", path, node);
            }
            try (PeerTestClient wrong = new PeerTestClient("not-" + SECRET); PeerTestClient right = new PeerTestClient(SECRET)) {
                assertThatThrownBy(() -> wrong.at(node.name(), node.clusterAddress()).read(bytes("everywhere")).block())
                        .as("a read on %s's cluster port with a wrong secret", node)
                        .isInstanceOf(PeerException.Refused.class);
                assertThat(right.at(node.name(), node.clusterAddress()).read(bytes("everywhere")).block())
                        .as("%s's own copy of everywhere, read with the secret", node)
                        .hasValueSatisfying(record -> assertThat(new String(record.value(), StandardCharsets.UTF_8))
                                .isEqualTo(value("everywhere")));
            }
        }
    }

    @Test
    @Order(4)
    void whileANodeIsStoppedTheOthersServeAndReportIt() {
        putEverywhere("before-stop");
        Node stopped = cluster.node("node2");
        cluster.stop("node2");
        Instant stoppedAt = Instant.now();
        List<Node> others = cluster.running();

        // Right away, before the damping period could take node2 off the ring (from=3 would then
        // exceed the ring's size): two of three replicas are enough.
        for (Node other : others) {
            String key = "during-stop-" + other.host();
            expect(client.putEntity(other.api(), key, "2/3", value(key)), 201, "PUT %s 2/3 via %s", key, other);
            assertRead(other, "before-stop", "2/3");
        }
        System.out.printf("[container tests] 2/3 requests served %d ms after node2 stopped%n",
                Duration.between(stoppedAt, Instant.now()).toMillis());

        // Each other node reports node2 unreachable; its name no longer resolves, so once the
        // damping period is over, it leaves their ring.
        Map<String, List<String>> seen = new LinkedHashMap<>();
        others.forEach(other -> seen.put(other.host(), new ArrayList<>()));
        await().atMost(REPORTED_DOWN).pollInterval(Duration.ofMillis(200)).untilAsserted(() -> {
            for (Node other : others) {
                ClusterView view = client.cluster(other.api());
                Member member = view.member(stopped.name());
                List<String> states = seen.get(other.host());
                String state = member == null ? "LEFT" : member.state();
                if (states.isEmpty() || !states.getLast().equals(state)) {
                    states.add(state);
                }
            }
            for (Node other : others) {
                // (LEFT, off the ring, before any of these, would mean it was never reported unreachable.)
                assertThat(seen.get(other.host())).as("node2's states as %s saw them (LEFT: off the ring)", other.host())
                        .containsAnyElementsOf(UNREACHABLE);
            }
        });
        System.out.printf("[container tests] node2 as the others saw it, after its stop: %s%n", seen);
        cluster.awaitRing(DAMPING, "node1", "node3");
        System.out.printf("[container tests] node2 left the others' ring %d ms after its stop%n",
                Duration.between(stoppedAt, Instant.now()).toMillis());
    }

    @Test
    @Order(5)
    void aRecreatedNodeRejoinsUnderItsNameOnANewAddressWithItsData() {
        String oldIp = cluster.node("node2").ip();
        Node node2 = cluster.recreate("node2");
        assertThat(node2.ip()).as("the re-created container's address").isNotEqualTo(oldIp);
        Instant startedAt = Instant.now();

        cluster.awaitRing(AGREEMENT, "node1", "node2", "node3");
        await().atMost(AGREEMENT).pollInterval(Duration.ofMillis(250)).untilAsserted(() -> {
            for (Node other : List.of(cluster.node("node1"), cluster.node("node3"))) {
                ClusterView view = client.cluster(other.api());
                Member member = view.member(node2.name());
                assertThat(member).as("node2 in the view of %s: %s", other, view).isNotNull();
                assertThat(member.state()).as("node2's state in the view of %s: %s", other, view).isEqualTo("UP");
                assertThat(member.address()).as("node2's address in the view of %s: %s", other, view)
                        .isIn(node2.ip(), null);
            }
        });
        System.out.printf("[container tests] node2 (%s, was %s) back on every ring and UP %d ms after it was ready%n",
                node2.ip(), oldIp, Duration.between(startedAt, Instant.now()).toMillis());

        // Its volume came along: it holds what it stored before the stop. (A read over the peer
        // protocol gets this node's own copy; a public read with 1/1 would ask the key's first replica.)
        try (PeerTestClient peer = new PeerTestClient(SECRET)) {
            assertThat(peer.at(node2.name(), node2.clusterAddress()).read(bytes("before-stop")).block())
                    .as("node2's own copy of before-stop")
                    .hasValueSatisfying(record -> assertThat(new String(record.value(), StandardCharsets.UTF_8))
                            .isEqualTo(value("before-stop")));
        }

        // And it serves every key, those written while it was away included.
        for (String key : List.of("before-stop", "everywhere", "during-stop-node1", "during-stop-node3", "key-node2-0")) {
            assertRead(node2, key, null);
        }
    }

    /**
     * Adding a third zone to a two-zone cluster under load: eight writers at {@code 2/3} through the
     * three nodes, each reading a key back after each write, while node4 joins in zone-c, where it
     * is alone and so takes a replica of every key. No request fails, no read is stale, nothing
     * acknowledged is lost, and then every key written is in three zones, each replica holding its
     * newest version; the keys written before, with no write reaching node4, are in its store:
     * pulled as it joined.
     */
    @Test
    @Order(6)
    void aFourthNodeInAThirdZoneJoinsUnderLoadAndEveryKeyIsThenInThreeZones() throws Exception {
        List<String> keys = putJoinKeys("before-node4-");
        List<URI> through = cluster.running().stream().map(Node::api).toList();
        WriteHistory history = new WriteHistory("2/3").readingBack();
        history.start(() -> through, 8, 60);
        awaitAcknowledged(history, LOAD_AROUND_JOIN);
        Node node4 = cluster.start(inZone("node4"), "node4").getFirst();
        Instant startedAt = Instant.now();
        // Ready means joined: it pulled before it reported ready; awaitRing also waits until every
        // node sees it NORMAL.
        cluster.awaitRing(AGREEMENT, "node1", "node2", "node3", "node4");
        System.out.printf("[container tests] node4 on every ring, NORMAL, %d ms after it was ready%n",
                Duration.between(startedAt, Instant.now()).toMillis());
        awaitAcknowledged(history, history.acknowledged() + LOAD_AROUND_JOIN);
        history.stop();
        System.out.printf("[container tests] node4 joined zone-c under load: writes %s, reads %s, %d stale%n", history.outcomes(),
                history.readOutcomes(), history.staleReads().size());
        assertThat(history.failures()).as("writes failed while node4 joined").isEmpty();
        assertThat(history.readFailures()).as("reads failed while node4 joined").isEmpty();
        assertThat(history.staleReads()).as("reads that missed an acknowledged write").isEmpty();
        assertThat(history.lost(through.getFirst())).as("acknowledged writes lost").isEmpty();

        List<String> members = cluster.running().stream().map(Node::name).toList();
        assertHoldsWhatItOwns(node4, members, keys);
        List<String> written = new ArrayList<>(keys);
        written.addAll(history.keys());
        assertInThreeZonesAndConverged(members, written);

        expect(client.putEntity(node4.api(), "via-node4", null, value("via-node4")), 201, "PUT via node4");
        for (Node reader : cluster.running()) {
            assertRead(reader, "via-node4", null);
        }
    }

    @Test
    @Order(7)
    void aRemovedNodeLeavesEveryRingAfterTheDampingPeriod() {
        cluster.remove("node4");
        Instant removedAt = Instant.now();
        cluster.awaitRing(DAMPING, "node1", "node2", "node3");
        System.out.printf("[container tests] node4 off every ring %d ms after its container was removed%n",
                Duration.between(removedAt, Instant.now()).toMillis());

        // The ring has three members again: 2/3 is valid and served.
        for (Node node : cluster.running()) {
            String key = "after-scale-down-" + node.host();
            expect(client.putEntity(node.api(), key, "2/3", value(key)), 201, "PUT %s 2/3", key);
            assertRead(node, key, "2/3");
        }
    }

    @Test
    @Order(8)
    void aJoiningNodeGoesOnWithoutAnOwnerThatHangsOnceTheOthersHoldEveryMajorityWrite() throws Exception {
        List<String> keys = putJoinKeys("before-node5-");
        // node5 waits two of its discovery rounds before it pulls: 20 s, long enough to hang
        // node3 after node5 has seen it and before node5 pulls from it.
        CompletableFuture<Node> starting = CompletableFuture.supplyAsync(
                () -> cluster.start(Map.of("RINGKV_CLUSTER_DISCOVERY_REFRESH_INTERVAL", "10s", "RINGKV_CLUSTER_ZONE", ZONES.get("node5")),
                        "node5").getFirst());
        String node3 = cluster.node("node3").name();
        await().atMost(AGREEMENT).pollInterval(Duration.ofMillis(250)).ignoreExceptions().untilAsserted(() -> {
            ClusterView view = client.cluster(cluster.node("node5").api());
            assertThat(view.ring()).as("node5's ring: %s", view).contains(node3);
            assertThat(view.member(view.self()).dataState()).as("node5 in its view: %s", view).isEqualTo("JOINING");
        });
        // node3 hangs but stays in DNS: it stays on the ring, an owner node5 cannot pull from.
        cluster.pause("node3");
        try {
            Node node5 = starting.get(AGREEMENT.plus(OWNER_WAIT).toSeconds() + 30, TimeUnit.SECONDS);
            assertThat(cluster.node("node5").logs()).as("node5's log")
                    .contains("joining without [" + node3 + "]");
            await().atMost(AGREEMENT).pollInterval(Duration.ofMillis(250)).untilAsserted(() -> {
                for (Node node : cluster.running()) {
                    assertThat(client.cluster(node.api()).member(node5.name()).dataState()).as("node5 on %s", node).isEqualTo("NORMAL");
                }
            });

            // Every key node5 owns is in its own store: node1 and node2 had every 2/3 write between them.
            assertHoldsWhatItOwns(node5, List.of(cluster.node("node1").name(), cluster.node("node2").name(), node3, node5.name()), keys);
        } finally {
            cluster.unpause("node3");
        }
        cluster.remove("node5");
        cluster.awaitRing(DAMPING.plus(AGREEMENT), "node1", "node2", "node3");
    }

    /** Writes {@value #JOIN_KEYS} keys with that prefix at 2/3 through node1, before a node joins. */
    private static List<String> putJoinKeys(String prefix) {
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < JOIN_KEYS; i++) {
            String key = prefix + i;
            expect(client.putEntity(cluster.node("node1").api(), key, "2/3", value(key)), 201, "PUT %s 2/3", key);
            keys.add(key);
        }
        return keys;
    }

    /**
     * Each key the node owns on a ring of these four members (one of its first three owners) is in
     * the node's own store, read over its cluster port.
     */
    private static void assertHoldsWhatItOwns(Node node, List<String> members, List<String> keys) {
        HashRing ring = new HashRing(zoned(members), HashRing.DEFAULT_VNODES);
        int owned = 0;
        try (PeerTestClient peer = new PeerTestClient(SECRET)) {
            for (String key : keys) {
                if (ring.replicasFor(bytes(key), 3).contains(node.name())) {
                    owned++;
                    assertThat(peer.at(node.name(), node.clusterAddress()).read(bytes(key)).block())
                            .as("%s's own copy of %s", node.host(), key)
                            .hasValueSatisfying(record -> assertThat(new String(record.value(), StandardCharsets.UTF_8))
                                    .isEqualTo(value(key)));
                }
            }
        }
        assertThat(owned).as("%s, alone in its zone, owns every key", node.host()).isEqualTo(keys.size());
    }

    /**
     * Every key is placed on three members in three zones, and within {@link #AGREEMENT} each of
     * them holds the newest version any node holds (read over the cluster ports).
     */
    private static void assertInThreeZonesAndConverged(List<String> members, List<String> keys) {
        HashRing ring = new HashRing(zoned(members), HashRing.DEFAULT_VNODES);
        Map<String, Node> byName = new LinkedHashMap<>();
        cluster.running().forEach(node -> byName.put(node.name(), node));
        try (PeerTestClient peers = new PeerTestClient(SECRET)) {
            await().atMost(AGREEMENT).pollInterval(Duration.ofSeconds(1)).untilAsserted(() -> {
                List<String> wrong = new ArrayList<>();
                ReplicaCensus.of(name -> peers.at(name, byName.get(name).clusterAddress()), members, keys).forEach((key, copies) -> {
                    List<String> replicas = ring.replicasFor(bytes(key), 3);
                    long newest = copies.values().stream().mapToLong(Record::timestamp).max().orElse(-1);
                    boolean inThreeZones = zoned(replicas).stream().map(member -> member.zone().orElseThrow()).distinct().count() == 3;
                    if (!inThreeZones || !replicas.stream().allMatch(replica -> copies.containsKey(replica)
                            && copies.get(replica).timestamp() == newest)) {
                        wrong.add(key + " placed on " + replicas + ", held by " + copies);
                    }
                });
                assertThat(wrong).as("keys not in three zones, or not in their newest version on each replica").isEmpty();
            });
        }
    }

    private static void awaitAcknowledged(WriteHistory history, long count) {
        await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(100))
                .untilAsserted(() -> assertThat(history.acknowledged()).as("writes acknowledged").isGreaterThanOrEqualTo(count));
    }

    /** Writes a key with 3/3 through node1: every running node holds it. */
    private static void putEverywhere(String key) {
        Node node1 = cluster.node("node1");
        expect(client.putEntity(node1.api(), key, "3/3", value(key)), 201, "PUT %s 3/3", key);
    }

    private static void expect(NodeClient.Response response, int status, String what, Object... args) {
        assertThat(response.status()).as("%s answered %s", String.format(what, args), response).isEqualTo(status);
    }

    private static void assertRead(Node reader, String key, String replicas) {
        NodeClient.Response response = client.getEntity(reader.api(), key, replicas);
        assertThat(response).as("GET %s%s via %s", key, replicas == null ? "" : " " + replicas, reader)
                .isEqualTo(new NodeClient.Response(200, value(key)));
    }

    private static String value(String key) {
        return "value of " + key;
    }

    private static byte[] bytes(String key) {
        return key.getBytes(StandardCharsets.UTF_8);
    }
}
