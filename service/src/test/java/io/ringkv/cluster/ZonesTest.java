package io.ringkv.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.micrometer.core.instrument.MeterRegistry;
import io.ringkv.health.PeerMonitors;
import io.ringkv.health.PeerState;
import io.ringkv.ring.ClusterMembership;
import io.ringkv.support.TestNode;

/**
 * Six nodes in three zones, two each: every key's three replicas are in three zones, on every
 * node's ring and in the stores (a census of what each node holds), and reads ask this node's
 * zone first: a {@code 1/3} read stays in it, a {@code 2/3} read asks one replica there first.
 */
class ZonesTest {

    private static final List<String> ZONES = List.of("zone-a", "zone-b", "zone-c");
    private static final int KEYS = 300;

    @TempDir
    static Path dataRoot;

    private static final List<TestNode> nodes = new ArrayList<>();

    @BeforeAll
    static void start() {
        List<Integer> ports = TestNode.freePorts(6);
        for (int i = 0; i < ports.size(); i++) {
            // No background repair: the census counts the copies the writes made.
            nodes.add(TestNode.create(ports.get(i), dataRoot.resolve("node" + i), ports,
                    Map.of("ringkv.cluster.zone", zoneOf(i), "ringkv.repair.enabled", "false")));
        }
        nodes.parallelStream().forEach(TestNode::start);
        TestNode.awaitEachSeesEveryOtherHoldData(nodes);
        // Zones travel in the PINGs: every node places by all six once it has heard every peer.
        Awaitility.await("every node knowing every member's zone").atMost(Duration.ofSeconds(30))
                .until(() -> nodes.stream().allMatch(node -> node.bean(ClusterMembership.class).ring().zones().size() == 6));
        // A peer that started after a node is shunned by it until heard from; 3/3 writes need every replica.
        Awaitility.await("every node calling every peer").atMost(Duration.ofSeconds(30))
                .until(() -> nodes.stream().allMatch(node -> nodes.stream().filter(peer -> peer != node)
                        .allMatch(peer -> node.bean(PeerMonitors.class).of(peer.url()).state() == PeerState.UP)));
    }

    @AfterAll
    static void stop() {
        nodes.forEach(TestNode::stop);
    }

    private static String zoneOf(int node) {
        return ZONES.get(node % ZONES.size());
    }

    @Test
    void everyKeysReplicasAreInThreeZonesOnEveryRingAndInTheStores() {
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < KEYS; i++) {
            String key = "census-" + i;
            keys.add(key);
            nodes.get(i % nodes.size()).client().put().uri("/v0/entity?id=" + key + "&replicas=3/3")
                    .bodyValue(("v" + i).getBytes(StandardCharsets.UTF_8)).exchange().expectStatus().isCreated();
        }
        Map<String, String> zoneByNode = nodes.stream().collect(Collectors.toMap(TestNode::url, node -> zoneOf(nodes.indexOf(node))));
        for (String key : keys) {
            byte[] bytes = key.getBytes(StandardCharsets.UTF_8);
            List<String> placed = nodes.get(0).bean(ClusterMembership.class).ring().replicasFor(bytes, 3);
            for (TestNode node : nodes) {
                assertThat(node.bean(ClusterMembership.class).ring().replicasFor(bytes, 3)).as("%s's replicas of %s", node.url(), key)
                        .isEqualTo(placed);
            }
            Set<String> holders = nodes.stream().filter(node -> node.stored(key).isPresent()).map(TestNode::url).collect(Collectors.toSet());
            assertThat(holders).as("the nodes that hold %s", key).containsExactlyInAnyOrderElementsOf(placed);
            assertThat(holders.stream().map(zoneByNode::get).distinct()).as("their zones").hasSize(3);
        }
    }

    @Test
    void readsAskThisNodesZoneFirst() {
        for (int i = 0; i < 60; i++) {
            nodes.get(0).client().put().uri("/v0/entity?id=local-" + i + "&replicas=3/3").bodyValue("v".getBytes(StandardCharsets.UTF_8))
                    .exchange().expectStatus().isCreated();
        }
        double[] before = crossZoneReads();
        readAll("1/3");
        double[] afterOne = crossZoneReads();
        readAll("2/3");
        double[] afterTwo = crossZoneReads();

        double sameAtOne = afterOne[0] - before[0];
        double otherAtOne = afterOne[1] - before[1];
        assertThat(sameAtOne).as("1/3 reads in the zone").isGreaterThanOrEqualTo(6 * 60);
        // Only a read the zone's replica is late for (the hedge) asks elsewhere.
        assertThat(otherAtOne).as("1/3 reads across zones").isLessThan(0.05 * sameAtOne);
        double sameAtTwo = afterTwo[0] - afterOne[0];
        double otherAtTwo = afterTwo[1] - afterOne[1];
        assertThat(sameAtTwo).as("2/3 reads: the first replica asked is in the zone").isGreaterThanOrEqualTo(6 * 60);
        assertThat(otherAtTwo).as("2/3 reads: the second is in another (one replica per zone)").isGreaterThanOrEqualTo(6 * 60);
    }

    private static void readAll(String replicas) {
        for (TestNode node : nodes) {
            for (int i = 0; i < 60; i++) {
                node.client().get().uri("/v0/entity?id=local-" + i + "&replicas=" + replicas).exchange().expectStatus().isOk();
            }
        }
    }

    /** Replica reads all coordinators asked so far: in their zone, and across zones. */
    private static double[] crossZoneReads() {
        double same = 0;
        double other = 0;
        for (TestNode node : nodes) {
            MeterRegistry meters = node.bean(MeterRegistry.class);
            same += meters.get("ringkv.replica.reads").tag("zone", "same").counter().count();
            other += meters.get("ringkv.replica.reads").tag("zone", "other").counter().count();
        }
        return new double[] {same, other};
    }
}
