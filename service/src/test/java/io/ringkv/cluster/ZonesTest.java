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
import io.ringkv.support.BlockHoundInstaller;
import io.ringkv.support.TestNode;

/**
 * Six nodes in three zones, two each: every key's three replicas are in three zones, on every
 * node's ring and in the stores (a census of what each node holds), and reads ask this node's
 * zone first: a {@code 1/3} read stays in it, a {@code 2/3} read asks one replica there first.
 * Every node counts each zone's members, all up, and no range whose replicas share a zone.
 */
class ZonesTest {

    private static final List<String> ZONES = List.of("zone-a", "zone-b", "zone-c");
    private static final int KEYS = 300;

    @TempDir
    static Path dataRoot;

    private static final List<TestNode> nodes = new ArrayList<>();
    private static int blockingMark;

    @BeforeAll
    static void start() {
        blockingMark = BlockHoundInstaller.violations().size();
        List<Integer> ports = TestNode.freePorts(6);
        for (int i = 0; i < ports.size(); i++) {
            // No background repair: the census counts the copies the writes made. No hedged reads
            // (a read asks the rest only when one it asked fails): on a busy machine a 20 ms hedge
            // would ask across zones for reasons this test does not count.
            nodes.add(TestNode.create(ports.get(i), dataRoot.resolve("node" + i), ports, Map.of("ringkv.cluster.zone", zoneOf(i),
                    "ringkv.repair.enabled", "false", "ringkv.replication.read-hedge-delay", "10s")));
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
        // Zones are remembered in the ledger as the ring changes, on whatever thread changes it.
        assertThat(BlockHoundInstaller.violationsSince(blockingMark)).as("blocking calls on event loops").isEmpty();
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
            writeToAll(nodes.get(i % nodes.size()), key);
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
            writeToAll(nodes.get(0), "local-" + i);
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

    @Test
    void eachNodeCountsEveryZonesMembersUpAndNoRangeSharingAZone() {
        for (TestNode node : nodes) {
            node.client().get().uri("/v0/cluster").exchange()
                    .expectStatus().isOk()
                    .expectBody()
                    .jsonPath("$.zones[*].zone").isEqualTo(ZONES)
                    .jsonPath("$.zones[*].members").isEqualTo(List.of(2, 2, 2))
                    .jsonPath("$.zones[*].up").isEqualTo(List.of(2, 2, 2));
            String metrics = node.client().get().uri("/actuator/prometheus").exchange().expectStatus().isOk()
                    .expectBody(String.class).returnResult().getResponseBody();
            for (String zone : ZONES) {
                assertThat(metrics).as("%s's metrics", node.url())
                        .contains("ringkv_zone_members{application=\"ringkv\",zone=\"" + zone + "\"} 2.0",
                                "ringkv_zone_members_up{application=\"ringkv\",zone=\"" + zone + "\"} 2.0");
            }
            assertThat(metrics).as("%s's metrics", node.url()).contains("ringkv_ring_ranges_zone_shared{application=\"ringkv\"} 0.0");
        }
    }

    private static void readAll(String replicas) {
        for (TestNode node : nodes) {
            for (int i = 0; i < 60; i++) {
                String uri = "/v0/entity?id=local-" + i + "&replicas=" + replicas;
                Awaitility.await(uri).pollDelay(Duration.ZERO).atMost(Duration.ofSeconds(30))
                        .until(() -> node.client().get().uri(uri).exchange().returnResult(byte[].class).getStatus().value() == 200);
            }
        }
    }

    /**
     * Writes the key to all three replicas: again until all three took it. On a machine busy with
     * other tests a replica can be slow enough for a 3/3 write to answer 504, which is not what
     * this test looks at; the census needs every copy.
     */
    private static void writeToAll(TestNode coordinator, String key) {
        String uri = "/v0/entity?id=" + key + "&replicas=3/3";
        Awaitility.await(uri).pollDelay(Duration.ZERO).atMost(Duration.ofSeconds(30)).until(() -> coordinator.client().put().uri(uri)
                .bodyValue(key.getBytes(StandardCharsets.UTF_8)).exchange().returnResult(byte[].class).getStatus().value() == 201);
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
