package io.ringkv.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.ringkv.ring.ClusterMembership;
import io.ringkv.ring.MemberState;
import io.ringkv.support.BlockHoundInstaller;
import io.ringkv.support.TestNode;

/**
 * A node restarted in another zone moves there with its data: four nodes in zones a and b, every
 * key on its three replicas; one node of zone b comes back in zone c, a third zone, which changes
 * the replicas of most keys (zone c's one node holds one of every key). Once it has moved, every
 * node places every key alike, in three zones, and each replica holds the key: the moved node and
 * every other member that gained a key got it from the hand-over, not from repair (off here).
 */
class ZoneMoveTest {

    private static final int KEYS = 300;

    @TempDir
    Path dataRoot;

    private final List<TestNode> nodes = new ArrayList<>();

    @AfterEach
    void stop() {
        nodes.forEach(TestNode::stop);
    }

    @Test
    void aNodeRestartedInAnotherZoneMovesThereWithItsData() {
        int blockingMark = BlockHoundInstaller.violations().size();
        List<Integer> ports = TestNode.freePorts(4);
        List<String> zones = new ArrayList<>(List.of("zone-a", "zone-b", "zone-a", "zone-b"));
        for (int i = 0; i < ports.size(); i++) {
            nodes.add(TestNode.create(ports.get(i), dataRoot.resolve("node" + i), ports,
                    Map.of("ringkv.cluster.zone", zones.get(i), "ringkv.repair.enabled", "false",
                            // The move waits two rounds at each step for its peers to see it.
                            "ringkv.cluster.discovery.refresh-interval", "1s")));
        }
        nodes.parallelStream().forEach(TestNode::start);
        TestNode.awaitEachSeesEveryOtherHoldData(nodes);
        awaitZonesEverywhere(zones);
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < KEYS; i++) {
            keys.add("moving-" + i);
            writeToAll(nodes.get(i % 3), keys.get(i));
        }

        TestNode moving = nodes.get(3);
        moving.stop();
        zones.set(3, "zone-c");
        TestNode moved = moving.withSettings(Map.of("ringkv.cluster.zone", "zone-c")).start();
        nodes.set(3, moved);
        ClusterMembership itself = moved.bean(ClusterMembership.class);
        Awaitility.await("the node moved to zone-c and joined there").atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(100))
                .until(() -> itself.zoneToMoveTo().isEmpty() && itself.state(itself.self()) == MemberState.NORMAL);
        assertThat(itself.selfMember().zone()).contains("zone-c");
        awaitZonesEverywhere(zones);
        TestNode.awaitEachSeesEveryOtherHoldData(nodes);

        Map<String, String> zoneByNode = new HashMap<>();
        for (int i = 0; i < nodes.size(); i++) {
            zoneByNode.put(nodes.get(i).url(), zones.get(i));
        }
        int placedOnTheMovedNode = 0;
        for (String key : keys) {
            byte[] bytes = key.getBytes(StandardCharsets.UTF_8);
            List<String> placed = nodes.get(0).bean(ClusterMembership.class).view().current().replicasFor(bytes, 3);
            for (TestNode node : nodes) {
                assertThat(node.bean(ClusterMembership.class).view().current().replicasFor(bytes, 3))
                        .as("%s's replicas of %s", node.url(), key).isEqualTo(placed);
            }
            assertThat(placed.stream().map(zoneByNode::get).distinct()).as("the zones of %s's replicas", key).hasSize(3);
            Set<String> holders = nodes.stream().filter(node -> node.stored(key).isPresent()).map(TestNode::url)
                    .collect(Collectors.toSet());
            assertThat(holders).as("the nodes that hold %s", key).containsAll(placed);
            placedOnTheMovedNode += placed.contains(moved.url()) ? 1 : 0;
        }
        assertThat(placedOnTheMovedNode).as("keys with a replica in zone-c, its only node").isEqualTo(KEYS);
        assertThat(BlockHoundInstaller.violationsSince(blockingMark)).as("blocking calls on event loops").isEmpty();
    }

    /** Every node places every member in its zone: zones travel in the PINGs, a round (5 s) apart. */
    private void awaitZonesEverywhere(List<String> zones) {
        Map<String, String> expected = new TreeMap<>();
        for (int i = 0; i < nodes.size(); i++) {
            expected.put(nodes.get(i).url(), zones.get(i));
        }
        Awaitility.await("every node knowing every member's zone").atMost(Duration.ofSeconds(30))
                .until(() -> nodes.stream().allMatch(node -> node.bean(ClusterMembership.class).ring().zones().equals(expected)));
    }

    /** Writes the key to all three replicas, again until all three took it (a busy machine may answer 504). */
    private static void writeToAll(TestNode coordinator, String key) {
        String uri = "/v0/entity?id=" + key + "&replicas=3/3";
        Awaitility.await(uri).pollDelay(Duration.ZERO).atMost(Duration.ofSeconds(30)).until(() -> coordinator.client().put().uri(uri)
                .bodyValue(key.getBytes(StandardCharsets.UTF_8)).exchange().returnResult(byte[].class).getStatus().value() == 201);
    }
}
