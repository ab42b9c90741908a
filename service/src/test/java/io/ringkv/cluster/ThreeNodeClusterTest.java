package io.ringkv.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.test.web.reactive.server.WebTestClient;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.ringkv.support.BlockHoundInstaller;
import io.ringkv.support.Chunks;
import io.ringkv.support.TestCluster;
import io.ringkv.support.TestNode;

/** Sharding, replication and ranges on three real nodes that stay up for the whole class. */
class ThreeNodeClusterTest {

    @TempDir
    static Path dataRoot;

    private static TestCluster cluster;
    private static int blockingMark;

    @BeforeAll
    static void start() {
        blockingMark = BlockHoundInstaller.violations().size();
        // No background repair: these tests count copies and replica calls, which repair changes.
        cluster = TestCluster.start(3, dataRoot, Map.of("ringkv.repair.enabled", "false"));
    }

    @AfterAll
    static void stop() {
        cluster.close();
        assertThat(BlockHoundInstaller.violationsSince(blockingMark)).as("blocking calls on event loops").isEmpty();
    }

    @Test
    void everyNodeShowsTheSameRingAtClusterEndpoint() {
        List<String> names = cluster.nodes().stream().map(TestNode::url).sorted().toList();
        for (TestNode node : cluster.nodes()) {
            node.client().get().uri("/v0/cluster").exchange()
                    .expectStatus().isOk()
                    .expectBody()
                    .jsonPath("$.self").isEqualTo(node.url())
                    .jsonPath("$.version").isEqualTo(1)
                    .jsonPath("$.known").isEqualTo(true)
                    .jsonPath("$.members[*].name").isEqualTo(names)
                    .jsonPath("$.members[*].address").isEqualTo(List.of("127.0.0.1", "127.0.0.1", "127.0.0.1"))
                    .jsonPath("$.members[*].dataState").isEqualTo(List.of("NORMAL", "NORMAL", "NORMAL"));
        }
    }

    @Test
    void everyNodeReadsWhatAnyOtherWrote() {
        for (int writer = 0; writer < 3; writer++) {
            for (int i = 0; i < 20; i++) {
                String key = "shard-" + writer + "-" + i;
                cluster.client(writer).put().uri("/v0/entity?id=" + key).bodyValue(key.getBytes())
                        .exchange().expectStatus().isCreated();
            }
        }
        for (int reader = 0; reader < 3; reader++) {
            for (int writer = 0; writer < 3; writer++) {
                for (int i = 0; i < 20; i++) {
                    String key = "shard-" + writer + "-" + i;
                    cluster.client(reader).get().uri("/v0/entity?id=" + key).exchange()
                            .expectStatus().isOk().expectBody(String.class).isEqualTo(key);
                }
            }
        }
    }

    @Test
    void aWriteWithTwoOfThreeIsReadWithTwoOfThreeOnEveryNode() {
        for (int writer = 0; writer < 3; writer++) {
            String key = "quorum-" + writer;
            cluster.client(writer).put().uri("/v0/entity?id=" + key + "&replicas=2/3").bodyValue("v1".getBytes())
                    .exchange().expectStatus().isCreated();
            cluster.client(writer).put().uri("/v0/entity?id=" + key + "&replicas=2/3").bodyValue("v2".getBytes())
                    .exchange().expectStatus().isCreated();
            for (int reader = 0; reader < 3; reader++) {
                cluster.client(reader).get().uri("/v0/entity?id=" + key + "&replicas=2/3").exchange()
                        .expectStatus().isOk().expectBody(String.class).isEqualTo("v2");
            }
            cluster.client(writer).delete().uri("/v0/entity?id=" + key + "&replicas=2/3").exchange().expectStatus().isAccepted();
            for (int reader = 0; reader < 3; reader++) {
                cluster.client(reader).get().uri("/v0/entity?id=" + key + "&replicas=2/3").exchange().expectStatus().isNotFound();
            }
        }
    }

    @Test
    void aReadWithTwoOfThreeAsksItsOwnStoreAndOnePeerNotAllThree() {
        TestNode coordinator = cluster.node(0);
        for (int i = 0; i < 20; i++) {
            coordinator.client().put().uri("/v0/entity?id=asked-" + i + "&replicas=3/3").bodyValue(("v" + i).getBytes())
                    .exchange().expectStatus().isCreated();
        }
        double before = remoteReads(coordinator);
        int reads = 60;
        for (int i = 0; i < reads; i++) {
            coordinator.client().get().uri("/v0/entity?id=asked-" + (i % 20) + "&replicas=2/3").exchange()
                    .expectStatus().isOk()
                    .expectBody(String.class).isEqualTo("v" + (i % 20));
        }
        double asked = remoteReads(coordinator) - before;
        // Asking every replica would be 2 peer reads per GET; a few more than one per GET may come
        // from hedges on a loaded machine.
        assertThat(asked).as("peer reads for %d GETs at 2/3", reads).isBetween((double) reads, reads * 1.5);
    }

    private static double remoteReads(TestNode node) {
        return node.bean(MeterRegistry.class).find("ringkv.replica.calls").tag("operation", "read").timers().stream()
                .mapToDouble(Timer::count).sum();
    }

    @Test
    void aPutWithOneOfOneStoresExactlyOneCopyOnTheKeysPrimary() {
        for (int i = 0; i < 10; i++) {
            String key = "single-copy-" + i;
            cluster.client(i % 3).put().uri("/v0/entity?id=" + key + "&replicas=1/1").bodyValue("only".getBytes())
                    .exchange().expectStatus().isCreated();
            int copies = 0;
            for (TestNode node : cluster.nodes()) {
                copies += node.stored(key).isPresent() ? 1 : 0;
            }
            assertThat(copies).as("copies of " + key).isEqualTo(1);
            for (int reader = 0; reader < 3; reader++) {
                cluster.client(reader).get().uri("/v0/entity?id=" + key + "&replicas=1/1").exchange()
                        .expectStatus().isOk().expectBody(String.class).isEqualTo("only");
            }
        }
    }

    @Test
    void aPutWithTwoOfTwoStoresExactlyTwoCopies() {
        String key = "two-copies";
        cluster.client(0).put().uri("/v0/entity?id=" + key + "&replicas=2/2").bodyValue("x".getBytes())
                .exchange().expectStatus().isCreated();
        long copies = cluster.nodes().stream().filter(node -> node.stored(key).isPresent()).count();
        assertThat(copies).isEqualTo(2);
    }

    @Test
    void validatesReplicasAgainstTheClusterSize() {
        WebTestClient client = cluster.client(1);
        client.get().uri("/v0/entity?id=k&replicas=4/4").exchange().expectStatus().isBadRequest();
        client.get().uri("/v0/entity?id=k&replicas=3/2").exchange().expectStatus().isBadRequest();
        client.get().uri("/v0/entity?id=k&replicas=0/3").exchange().expectStatus().isBadRequest();
        client.put().uri("/v0/entity?id=k&replicas=2/4").bodyValue("v".getBytes()).exchange().expectStatus().isBadRequest();
        client.get().uri("/v0/entity?id=k&replicas=3/3").exchange().expectStatus().isNotFound();
    }

    @Test
    void rangesMergeAllNodesInKeyOrderWithTheNewestVersionOfEachKey() {
        TreeMap<String, String> expected = new TreeMap<>();
        for (int i = 0; i < 300; i++) {
            String key = String.format("range-%04d", i);
            String value = "value-" + i;
            // Spread copies unevenly: some keys live on one node only.
            String replicas = i % 3 == 0 ? "1/1" : i % 3 == 1 ? "2/3" : "3/3";
            cluster.client(i % 3).put().uri("/v0/entity?id=" + key + "&replicas=" + replicas).bodyValue(value.getBytes())
                    .exchange().expectStatus().isCreated();
            expected.put(key, value);
        }
        // Overwrite and delete through other nodes.
        for (int i = 0; i < 300; i += 7) {
            String key = String.format("range-%04d", i);
            cluster.client((i + 1) % 3).put().uri("/v0/entity?id=" + key + "&replicas=3/3").bodyValue("new".getBytes())
                    .exchange().expectStatus().isCreated();
            expected.put(key, "new");
        }
        for (int i = 0; i < 300; i += 11) {
            String key = String.format("range-%04d", i);
            cluster.client((i + 2) % 3).delete().uri("/v0/entity?id=" + key + "&replicas=3/3").exchange().expectStatus().isAccepted();
            expected.remove(key);
        }

        for (TestNode node : cluster.nodes()) {
            Chunks.Response all = Chunks.get(node.url() + "/v0/entities?start=range-");
            assertThat(all.status()).isEqualTo(200);
            assertThat(all.chunks()).isEqualTo(chunksOf(expected));

            Chunks.Response bounded = Chunks.get(node.url() + "/v0/entities?start=range-0100&end=range-0200");
            assertThat(bounded.chunks()).isEqualTo(chunksOf(expected.subMap("range-0100", "range-0200")));
        }
        assertThat(Chunks.get(cluster.node(0).url() + "/v0/entities?start=range-9").chunks()).isEmpty();
        assertThat(Chunks.get(cluster.node(0).url() + "/v0/entities?start=range-0150&end=range-0150").chunks()).isEmpty();
    }

    private static List<String> chunksOf(java.util.SortedMap<String, String> records) {
        List<String> chunks = new ArrayList<>();
        records.forEach((key, value) -> chunks.add(key + "\n" + value));
        return chunks;
    }

    @Test
    void replicasKeepTimestampsSoTheNewestWriteWinsEverywhere() {
        String key = "lww";
        cluster.client(0).put().uri("/v0/entity?id=" + key + "&replicas=3/3").bodyValue("first".getBytes()).exchange().expectStatus().isCreated();
        cluster.client(2).put().uri("/v0/entity?id=" + key + "&replicas=1/3").bodyValue("second".getBytes()).exchange().expectStatus().isCreated();
        cluster.client(1).get().uri("/v0/entity?id=" + key + "&replicas=3/3").exchange()
                .expectStatus().isOk().expectBody(String.class).isEqualTo("second");
        assertThat(new String(cluster.client(1).get().uri("/v0/entity?id=" + key).exchange()
                .expectBody(byte[].class).returnResult().getResponseBody(), StandardCharsets.UTF_8)).isEqualTo("second");
    }
}
