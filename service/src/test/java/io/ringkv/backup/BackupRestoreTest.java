package io.ringkv.backup;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.WebClient;

import io.ringkv.record.Record;
import io.ringkv.ring.ClusterMembership;
import io.ringkv.support.TestCluster;
import io.ringkv.support.TestNode;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * A cluster backed up while clients write, then restored into a cluster of another size: every
 * key acknowledged before the backup began reads back at its newest version, deleted keys stay
 * deleted, and each key is on its replicas in the new ring. In one JVM, on a mounted-volume store;
 * the same against a real object store with processes is {@code io.ringkv.process.BackupRestoreIT}.
 */
class BackupRestoreTest {

    private static final int KEYS = 600;

    @TempDir
    Path root;

    @Test
    void aBackupTakenUnderWritesRestoresIntoALargerClusterWithEveryAcknowledgedVersion() {
        Map<String, Object> settings = Map.of("ringkv.backup.target", root.resolve("store").toUri().toString(),
                "ringkv.repair.enabled", "false");
        Map<String, Optional<String>> expected = new ConcurrentHashMap<>();
        Map<String, Long> expiresAt = new HashMap<>();
        String backup;
        try (TestCluster old = TestCluster.start(3, root.resolve("old"), settings)) {
            WebClient client = WebClient.create(old.node(0).url());
            write(client, 0, KEYS, "first", expected);
            write(client, 0, KEYS / 3, "second", expected);
            delete(client, KEYS / 3, KEYS / 2, expected);
            // Values that expire: in an hour (they come back expiring when they did), in a moment (gone by the restore).
            expiresAt.putAll(writeExpiring(old, "lasting", "1h"));
            expiresAt.putAll(writeExpiring(old, "fleeting", "1s"));

            // Clients go on writing other keys while the backup is taken.
            AtomicBoolean writing = new AtomicBoolean(true);
            var load = Flux.range(0, Integer.MAX_VALUE).takeWhile(i -> writing.get())
                    .concatMap(i -> client.put().uri("/v0/entity?id=during-{i}", i).bodyValue("during").retrieve().toBodilessEntity())
                    .subscribeOn(Schedulers.boundedElastic()).subscribe();
            backup = startBackup(old.node(1));
            awaitComplete(old.node(2), backup);
            writing.set(false);
            load.dispose();
            backupListsItsFilesOnce(old.node(0), backup);
        }

        try (TestCluster restored = TestCluster.start(5, root.resolve("new"), settings)) {
            restored.node(3).client().post().uri("/actuator/restore").contentType(MediaType.APPLICATION_JSON)
                    .bodyValue(Map.of("from", backup)).exchange().expectStatus().isEqualTo(HttpStatus.ACCEPTED);
            awaitRestored(restored.node(3));

            WebClient client = WebClient.create(restored.node(4).url());
            List<String> wrong = new ArrayList<>();
            expected.forEach((key, value) -> {
                var answer = client.get().uri("/v0/entity?id={key}&replicas=2/3", key).exchangeToMono(response ->
                        response.bodyToMono(String.class).defaultIfEmpty("").map(body -> response.statusCode().value() + " " + body))
                        .block(Duration.ofSeconds(10));
                String want = value.map(v -> "200 " + v).orElse("404 ");
                if (!want.equals(answer)) {
                    wrong.add(key + ": " + answer + ", not " + want);
                }
            });
            assertThat(wrong).as("keys that did not come back as acknowledged").isEmpty();
            assertThat(misplaced(restored, expected.keySet())).as("keys missing from one of their 3 owners").isEmpty();

            assertThat(System.currentTimeMillis()).as("the fleeting ones expired before the restore ended")
                    .isGreaterThan(expiresAt.get("fleeting-0"));
            expiresAt.forEach((key, expiry) -> {
                int status = client.get().uri("/v0/entity?id={key}&replicas=2/3", key).exchangeToMono(response ->
                        Mono.just(response.statusCode().value())).block(Duration.ofSeconds(10));
                assertThat(status).as(key).isEqualTo(key.startsWith("lasting") ? 200 : 404);
                ClusterMembership membership = restored.node(0).bean(ClusterMembership.class);
                for (String owner : membership.ring().replicasFor(key.getBytes(StandardCharsets.UTF_8), 3)) {
                    TestNode node = restored.nodes().stream().filter(n -> n.url().equals(owner)).findFirst().orElseThrow();
                    assertThat(node.stored(key)).as("%s on %s: restored with its expiry, even expired", key, owner)
                            .hasValueSatisfying(record -> assertThat(record.expiresAt()).isEqualTo(expiry));
                }
            });
        }
    }

    /** Ten keys written with a ttl through node 0, by the expiry their owners hold. */
    private static Map<String, Long> writeExpiring(TestCluster cluster, String prefix, String ttl) {
        Map<String, Long> written = new HashMap<>();
        for (int i = 0; i < 10; i++) {
            String key = prefix + "-" + i;
            cluster.client(0).put().uri("/v0/entity?id=" + key + "&replicas=3/3&ttl=" + ttl).bodyValue(key.getBytes())
                    .exchange().expectStatus().isCreated();
            written.put(key, cluster.node(1).stored(key).orElseThrow().expiresAt());
        }
        return written;
    }

    @Test
    void aRestoreAsOfATimeBetweenTwoOverwritesBringsBackTheOlderValue() throws InterruptedException {
        Map<String, Object> settings = Map.of("ringkv.backup.target", root.resolve("store").toUri().toString(),
                "ringkv.repair.enabled", "false");
        Map<String, Optional<String>> older = new ConcurrentHashMap<>();
        Instant between;
        String newer;
        try (TestCluster cluster = TestCluster.start(3, root.resolve("old"), settings)) {
            WebClient client = WebClient.create(cluster.node(0).url());
            write(client, 0, 200, "older", older);
            delete(client, 150, 200, older);
            awaitComplete(cluster.node(0), startBackup(cluster.node(0)));
            Thread.sleep(1100);
            between = Instant.now();
            Thread.sleep(50);
            write(client, 0, 100, "newer", new ConcurrentHashMap<>());
            write(client, 150, 200, "written again", new ConcurrentHashMap<>());
            delete(client, 100, 150, new ConcurrentHashMap<>());
            Thread.sleep(1100);
            newer = startBackup(cluster.node(0));
            awaitComplete(cluster.node(0), newer);
        }
        try (TestCluster restored = TestCluster.start(3, root.resolve("new"), settings)) {
            refusedWithWhy(restored.node(0), Map.of("from", "../../etc"), 400, "not a backup id");
            refusedWithWhy(restored.node(0), Map.of("from", "2020-01-01T00-00-00Z"), 400, "no backup 2020-01-01T00-00-00Z");
            refusedWithWhy(restored.node(0), Map.of("from", newer, "asOf", "yesterday"), 400, "not an ISO-8601 instant");
            restored.node(0).client().post().uri("/actuator/restore").contentType(MediaType.APPLICATION_JSON)
                    .bodyValue(Map.of("from", newer, "asOf", between.toString())).exchange().expectStatus().isEqualTo(HttpStatus.ACCEPTED);
            awaitRestored(restored.node(0));
            WebClient client = WebClient.create(restored.node(1).url());
            older.forEach((key, value) -> {
                var answer = client.get().uri("/v0/entity?id={key}", key).exchangeToMono(response ->
                        response.bodyToMono(String.class).defaultIfEmpty("").map(body -> response.statusCode().value() + " " + body))
                        .block(Duration.ofSeconds(10));
                assertThat(answer).as(key).isEqualTo(value.map(v -> "200 " + v).orElse("404 "));
            });
        }
    }

    private static void refusedWithWhy(TestNode node, Map<String, String> request, int status, String why) {
        node.client().post().uri("/actuator/restore").contentType(MediaType.APPLICATION_JSON).bodyValue(request).exchange()
                .expectStatus().isEqualTo(status).expectBody(String.class).value(body -> assertThat(body).contains(why));
    }

    @Test
    void withoutABackupStoreBothEndpointsSaySo() {
        try (TestCluster node = TestCluster.start(1, root.resolve("alone"))) {
            node.node(0).client().post().uri("/actuator/backup").exchange().expectStatus().isEqualTo(HttpStatus.CONFLICT)
                    .expectBody(String.class).value(body -> assertThat(body).contains("ringkv.backup.target"));
            refusedWithWhy(node.node(0), Map.of("from", "2020-01-01T00-00-00Z"), 409, "ringkv.backup.target");
        }
    }

    private static void write(WebClient client, int from, int to, String prefix, Map<String, Optional<String>> expected) {
        Flux.range(from, to - from)
                .flatMap(i -> client.put().uri("/v0/entity?id=key-{i}", i).bodyValue(prefix + " " + i).retrieve().toBodilessEntity()
                        .doOnSuccess(ok -> expected.put("key-" + i, Optional.of(prefix + " " + i))), 16)
                .blockLast(Duration.ofSeconds(60));
    }

    private static void delete(WebClient client, int from, int to, Map<String, Optional<String>> expected) {
        Flux.range(from, to - from)
                .flatMap(i -> client.delete().uri("/v0/entity?id=key-{i}", i).retrieve().toBodilessEntity()
                        .doOnSuccess(ok -> expected.put("key-" + i, Optional.empty())), 16)
                .blockLast(Duration.ofSeconds(60));
    }

    @SuppressWarnings("unchecked")
    private static String startBackup(TestNode node) {
        Map<String, Object> started = node.client().post().uri("/actuator/backup").exchange()
                .expectStatus().isEqualTo(HttpStatus.ACCEPTED).expectBody(Map.class).returnResult().getResponseBody();
        assertThat((Map<String, String>) started.get("refused")).isEmpty();
        return (String) started.get("id");
    }

    @SuppressWarnings("unchecked")
    private static void awaitComplete(TestNode node, String id) {
        Awaitility.await("backup " + id + " complete").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200)).until(() -> {
            Map<String, Object> report = node.client().get().uri("/actuator/backup").exchange().expectStatus().isOk()
                    .expectBody(Map.class).returnResult().getResponseBody();
            return ((List<Map<String, Object>>) report.get("backups")).stream()
                    .anyMatch(backup -> id.equals(backup.get("id")) && Boolean.TRUE.equals(backup.get("complete")));
        });
    }

    @SuppressWarnings("unchecked")
    private static void awaitRestored(TestNode node) {
        Awaitility.await("the restore done").atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(200)).until(() -> {
            Map<String, Object> progress = node.client().get().uri("/actuator/restore").exchange().expectStatus().isOk()
                    .expectBody(Map.class).returnResult().getResponseBody();
            assertThat(progress.get("phase")).as("restore: %s", progress).isNotEqualTo("failed");
            return "done".equals(progress.get("phase"));
        });
    }

    /** Each node's own manifest lists every file of its checkpoint once, under its store's identity or the backup's folder. */
    private static void backupListsItsFilesOnce(TestNode node, String id) {
        NodeManifest manifest = Mono.fromCallable(() -> Manifests.node(node.bean(BackupStore.class), id, node.url()))
                .subscribeOn(Schedulers.boundedElastic()).block();
        assertThat(manifest.records()).isGreaterThanOrEqualTo(KEYS);
        assertThat(manifest.tombstones()).isGreaterThan(0);
        assertThat(manifest.files()).extracting(NodeManifest.File::name).doesNotHaveDuplicates().contains("CURRENT");
        assertThat(manifest.files()).allSatisfy(file -> assertThat(file.object())
                .startsWith(BackupLayout.isShared(file.name()) ? "files/" + manifest.storeIdentity() + "/" : "backups/" + id + "/"));
    }

    /** The keys some owner in the new ring does not hold at its newest version there. */
    private static List<String> misplaced(TestCluster cluster, Iterable<String> keys) {
        ClusterMembership membership = cluster.node(0).bean(ClusterMembership.class);
        List<String> missing = new ArrayList<>();
        for (String key : keys) {
            List<String> owners = membership.ring().replicasFor(key.getBytes(StandardCharsets.UTF_8), 3);
            List<Optional<Record>> held = cluster.nodes().stream().filter(node -> owners.contains(node.url()))
                    .map(node -> node.stored(key)).toList();
            if (held.size() != 3 || held.stream().anyMatch(Optional::isEmpty) || held.stream().distinct().count() != 1) {
                missing.add(key + " " + held);
            }
        }
        return missing;
    }
}
