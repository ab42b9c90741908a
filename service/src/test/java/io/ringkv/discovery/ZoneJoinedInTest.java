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
 * A node that joined without a zone keeps none when one is set, so that a chart that starts
 * telling zones does not move a cluster made before them (one that joined in a zone moves to
 * another with its data: {@code cluster.ZoneMoveTest}). A new store takes the zone it is given.
 */
class ZoneJoinedInTest {

    @TempDir
    Path dir;

    @Test
    void aNodeThatJoinedWithoutAZoneKeepsNoneAndANewStoreTakesItsSetting() {
        int unzonedPort = TestNode.freePorts(1).get(0);
        TestNode unzoned = started(TestNode.create(unzonedPort, dir.resolve("unzoned"), List.of(unzonedPort), Map.of()));
        unzoned.stop();
        TestNode told = unzoned.withSettings(Map.of("ringkv.cluster.zone", "zone-b")).start();
        try {
            assertThat(told.bean(ClusterMembership.class).selfMember().zone()).as("joined without a zone").isEmpty();
            assertThat(told.bean(ClusterMembership.class).zoneToMoveTo()).isEmpty();
        } finally {
            told.stop();
        }

        int other = TestNode.freePorts(1).get(0);
        TestNode fresh = TestNode.create(other, dir.resolve("fresh"), List.of(other), Map.of("ringkv.cluster.zone", "zone-b")).start();
        try {
            assertThat(fresh.bean(ClusterMembership.class).selfMember().zone()).as("a new store").contains("zone-b");
        } finally {
            fresh.stop();
        }
    }

    /** Started, with a key written. */
    private static TestNode started(TestNode node) {
        node.start().client().put().uri("/v0/entity?id=k&replicas=1/1").bodyValue("v".getBytes(StandardCharsets.UTF_8))
                .exchange().expectStatus().isCreated();
        return node;
    }
}
