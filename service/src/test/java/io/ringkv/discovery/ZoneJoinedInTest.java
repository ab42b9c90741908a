package io.ringkv.discovery;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.ringkv.ring.ClusterMembership;
import io.ringkv.support.TestNode;

/**
 * A node keeps the zone its store joined the cluster in: another zone would move its keys'
 * replicas without their data. A new store takes the zone it is given.
 */
class ZoneJoinedInTest {

    @TempDir
    Path dir;

    @Test
    void aNodeKeepsTheZoneItsStoreJoinedInAndANewStoreTakesItsSetting() {
        int port = TestNode.freePorts(1).get(0);
        TestNode node = TestNode.create(port, dir.resolve("node"), List.of(port), Map.of("ringkv.cluster.zone", "zone-a")).start();
        try {
            node.client().put().uri("/v0/entity?id=k&replicas=1/1").bodyValue("v".getBytes(StandardCharsets.UTF_8))
                    .exchange().expectStatus().isCreated();
        } finally {
            node.stop();
        }

        TestNode moved = node.withSettings(Map.of("ringkv.cluster.zone", "zone-b")).start();
        try {
            assertThat(moved.bean(ClusterMembership.class).selfMember().zone()).as("the zone it joined in").contains("zone-a");
            moved.client().get().uri("/v0/entity?id=k&replicas=1/1").exchange().expectStatus().isOk();
        } finally {
            moved.stop();
        }

        int other = TestNode.freePorts(1).get(0);
        TestNode fresh = TestNode.create(other, dir.resolve("fresh"), List.of(other), Map.of("ringkv.cluster.zone", "zone-b")).start();
        try {
            assertThat(fresh.bean(ClusterMembership.class).selfMember().zone()).as("a new store").contains("zone-b");
        } finally {
            fresh.stop();
        }
    }
}
