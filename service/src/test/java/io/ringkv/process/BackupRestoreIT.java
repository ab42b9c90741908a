package io.ringkv.process;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.util.FileSystemUtils;

import io.ringkv.peer.client.PeerClient;
import io.ringkv.record.KeyedRecord;
import io.ringkv.record.RecordBatch;
import io.ringkv.ring.HashRing;
import io.ringkv.ring.Member;
import io.ringkv.support.NodeProcess;
import io.ringkv.support.PeerTestClient;
import io.ringkv.support.S3Server;
import io.ringkv.support.TestNode;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Backup and restore on node processes against a real object store (SeaweedFS's S3 gateway):
 * three nodes hold 30,000 keys (or {@code -Dringkv.test.backup-keys}: 100,000 take 6 minutes on two
 * cores) written, overwritten and deleted at {@code 2/3}; a backup is taken
 * while clients go on writing; the cluster is destroyed, and a five-node cluster restores the
 * backup, once cut short by killing the restoring node half-way, then run again. Afterwards a
 * census finds every key acknowledged before the backup began on each of its three owners in the
 * new ring at its newest version (a deleted key as its tombstone), and the keys read back through
 * the API at {@code 2/3} (one in ten) answer that version, {@code 404} for a deleted one.
 */
class BackupRestoreIT {

    private static final int KEYS = Integer.getInteger("ringkv.test.backup-keys", 30_000);
    private static final int OVERWRITTEN = KEYS / 5;
    private static final int DELETED_FROM = KEYS - KEYS / 10;
    private static final int IN_FLIGHT = 32;
    /**
     * Every this-many-th key is read back through the API at 2/3 (reading all 100,000 took a
     * minute on two cores); the census checks every key on each of its owners directly.
     */
    private static final int READ_EVERY = 10;
    private static final Pattern RECORDS = Pattern.compile("\"records\":(\\d+)");
    private static final Pattern PHASE = Pattern.compile("\"phase\":\"([a-z]+)\"");

    @TempDir
    Path dir;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private final List<NodeProcess> nodes = new ArrayList<>();
    private S3Server s3;

    @AfterEach
    void stop() {
        nodes.forEach(NodeProcess::close);
        if (s3 != null) {
            s3.close();
        }
    }

    @Test
    void aBackupTakenUnderLoadIsRestoredIntoFiveNodesAlsoAfterARestoreCutShort() throws Exception {
        s3 = S3Server.start(dir.resolve("s3"));
        s3.createBucket("ringkv");
        String[] backupSettings = {"--ringkv.backup.target=s3://ringkv/it", "--ringkv.backup.endpoint=" + s3.endpoint(),
                // No scheduled repair: what the new cluster holds, the restore wrote.
                "--ringkv.repair.enabled=false"};

        List<NodeProcess> old = start(3, "old", backupSettings);
        Map<Integer, Optional<String>> expected = new HashMap<>();
        long started = System.nanoTime();
        requests(old, 0, KEYS, (node, i) -> put(node, i, value(i, 1)));
        requests(old, 0, OVERWRITTEN, (node, i) -> put(node, i, value(i, 2)));
        requests(old, DELETED_FROM, KEYS, this::delete);
        for (int i = 0; i < KEYS; i++) {
            expected.put(i, i >= DELETED_FROM ? Optional.empty() : Optional.of(value(i, i < OVERWRITTEN ? 2 : 1)));
        }
        System.out.printf("wrote %d keys, overwrote %d, deleted %d in %d ms%n", KEYS, OVERWRITTEN, KEYS - DELETED_FROM,
                Duration.ofNanos(System.nanoTime() - started).toMillis());

        // Clients go on writing other keys while the backup is taken; none of them may fail.
        AtomicBoolean loading = new AtomicBoolean(true);
        AtomicLong duringOk = new AtomicLong();
        Map<String, Long> duringFailed = new ConcurrentHashMap<>();
        var load = Flux.range(0, Integer.MAX_VALUE).takeWhile(i -> loading.get())
                .flatMap(i -> send(old.get(i % 3), HttpRequest.newBuilder(entity(old.get(i % 3), "during-" + i, "2/3"))
                        .PUT(HttpRequest.BodyPublishers.ofString("during " + i)))
                        .doOnNext(status -> {
                            if (status == 201) {
                                duringOk.incrementAndGet();
                            } else {
                                duringFailed.merge(String.valueOf(status), 1L, Long::sum);
                            }
                        }), 8)
                .then().toFuture();
        Thread.sleep(1000);
        HttpResponse<String> backup = post(old.get(1), "/actuator/backup", "");
        assertThat(backup.statusCode()).as(backup.body()).isEqualTo(202);
        assertThat(backup.body()).contains("\"refused\":{}");
        String id = field(backup.body(), Pattern.compile("\"id\":\"([^\"]+)\""));
        long backupBegan = System.nanoTime();
        awaitBody(old.get(0), "/actuator/backup", body -> body.contains("{\"id\":\"" + id + "\",\"complete\":true"),
                Duration.ofMinutes(5));
        System.out.printf("backup %s complete in %d ms%n", id, Duration.ofNanos(System.nanoTime() - backupBegan).toMillis());
        Thread.sleep(1000);
        loading.set(false);
        load.get(30, TimeUnit.SECONDS);
        System.out.printf("writes during the backup: %d acknowledged, not 2xx: %s%n", duringOk.get(), duringFailed);
        assertThat(duringFailed).as("writes that failed while the backup was taken").isEmpty();
        assertThat(duringOk.get()).isPositive();

        // The cluster is lost: killed, not stopped (a graceful stop would first drain and hand over).
        old.forEach(NodeProcess::kill);
        nodes.removeAll(old);
        assertThat(FileSystemUtils.deleteRecursively(dir.resolve("old"))).as("deleted").isTrue();

        List<NodeProcess> restored = start(5, "new", backupSettings);
        NodeProcess restorer = restored.getFirst();
        HttpResponse<String> first = post(restorer, "/actuator/restore", "{\"from\":\"" + id + "\"}");
        assertThat(first.statusCode()).as(first.body()).isEqualTo(202);
        // Cut short: killed once it has streamed as many records as there are keys, a quarter to a
        // third of them (three owners a key, and the keys written during the backup).
        String halfWay = awaitBody(restorer, "/actuator/restore", body -> Long.parseLong(field(body, RECORDS)) >= KEYS,
                Duration.ofMinutes(5));
        restorer.kill();
        assertThat(field(halfWay, PHASE)).as("the restore when it was killed: %s", halfWay).isIn("download", "stream");
        restorer.startAndAwait(Duration.ofSeconds(120));
        long restoreBegan = System.nanoTime();
        HttpResponse<String> again = post(restorer, "/actuator/restore", "{\"from\":\"" + id + "\"}");
        assertThat(again.statusCode()).as(again.body()).isEqualTo(202);
        String done = awaitBody(restorer, "/actuator/restore", body -> !field(body, PHASE).equals("download")
                && !field(body, PHASE).equals("stream"), Duration.ofMinutes(10));
        assertThat(field(done, PHASE)).as(done).isEqualTo("done");
        System.out.printf("restore run again: %s in %d ms%n", done, Duration.ofNanos(System.nanoTime() - restoreBegan).toMillis());

        long reading = System.nanoTime();
        List<String> wrong = Flux.range(0, KEYS / READ_EVERY).map(i -> i * READ_EVERY)
                .flatMap(i -> read(restored.get(i % restored.size()), i).mapNotNull(answer -> {
                    String want = expected.get(i).map(v -> "200 " + v).orElse("404 ");
                    return want.equals(answer) ? null : key(i) + ": " + answer + ", not " + want;
                }), IN_FLIGHT)
                .collectList().block(Duration.ofMinutes(10));
        System.out.printf("read %d keys back at 2/3 in %d ms%n", KEYS / READ_EVERY, Duration.ofNanos(System.nanoTime() - reading).toMillis());
        assertThat(wrong).as("keys acknowledged before the backup that did not read back so: %d", wrong.size()).isEmpty();
        long counting = System.nanoTime();
        List<String> misplaced = census(restored, expected);
        System.out.printf("census of %d keys on their owners in %d ms%n", KEYS, Duration.ofNanos(System.nanoTime() - counting).toMillis());
        assertThat(misplaced).as("keys not on each of their 3 owners at their newest acknowledged version").isEmpty();
    }

    private List<NodeProcess> start(int count, String name, String... settings) throws IOException {
        Files.createDirectories(dir.resolve(name));
        List<NodeProcess> started = NodeProcess.define(count, "256m", dir.resolve(name), settings).stream()
                .map(node -> node.withEnvironment(s3.credentials())).toList();
        nodes.addAll(started);
        started.parallelStream().forEach(node -> node.startAndAwait(Duration.ofSeconds(120)));
        return started;
    }

    /**
     * Each key's copies on the nodes that own it in the new ring: three, all the same version,
     * the newest acknowledged (a tombstone for a deleted key).
     */
    private static List<String> census(List<NodeProcess> cluster, Map<Integer, Optional<String>> expected) {
        HashRing ring = new HashRing(Member.named(cluster.stream().map(NodeProcess::url).toList()), HashRing.DEFAULT_VNODES);
        Map<String, List<byte[]>> owned = new HashMap<>();
        for (int i = 0; i < KEYS; i++) {
            byte[] key = key(i).getBytes(StandardCharsets.UTF_8);
            ring.replicasFor(key, 3).forEach(owner -> owned.computeIfAbsent(owner, ignored -> new ArrayList<>()).add(key));
        }
        Map<String, List<String>> copies = new HashMap<>();
        try (PeerTestClient peers = new PeerTestClient(TestNode.SECRET)) {
            owned.forEach((owner, keys) -> {
                PeerClient replica = peers.of(owner);
                for (int from = 0; from < keys.size(); ) {
                    RecordBatch batch = replica.readBatch(keys.subList(from, Math.min(keys.size(), from + RecordBatch.MAX_KEYS)))
                            .block(Duration.ofSeconds(30));
                    for (KeyedRecord found : batch.found()) {
                        copies.computeIfAbsent(new String(found.key(), StandardCharsets.UTF_8), ignored -> new ArrayList<>())
                                .add(found.record().tombstone() ? "deleted at " + found.record().timestamp()
                                        : new String(found.record().value(), StandardCharsets.UTF_8));
                    }
                    from += batch.covered();
                }
            });
        }
        List<String> wrong = new ArrayList<>();
        for (int i = 0; i < KEYS && wrong.size() < 20; i++) {
            List<String> held = copies.getOrDefault(key(i), List.of());
            Optional<String> want = expected.get(i);
            boolean right = held.size() == 3 && held.stream().distinct().count() == 1
                    && (want.isPresent() ? held.getFirst().equals(want.get()) : held.getFirst().startsWith("deleted at "));
            if (!right) {
                wrong.add(key(i) + " held as " + held + ", expected " + want.orElse("deleted"));
            }
        }
        return wrong;
    }

    /** The calls for keys {@code from..to}, {@value #IN_FLIGHT} at once, spread over the nodes; each must answer 2xx. */
    private void requests(List<NodeProcess> cluster, int from, int to, BiFunction<NodeProcess, Integer, Mono<Integer>> call) {
        Map<Integer, Long> failed = new ConcurrentHashMap<>();
        Flux.range(from, to - from)
                .flatMap(i -> call.apply(cluster.get(i % cluster.size()), i).doOnNext(status -> {
                    if (status / 100 != 2) {
                        failed.merge(status, 1L, Long::sum);
                    }
                }), IN_FLIGHT)
                .blockLast(Duration.ofMinutes(10));
        assertThat(failed).as("answers not 2xx, by status").isEmpty();
    }

    private Mono<Integer> put(NodeProcess node, int i, String value) {
        return send(node, HttpRequest.newBuilder(entity(node, key(i), "2/3")).PUT(HttpRequest.BodyPublishers.ofString(value)));
    }

    private Mono<Integer> delete(NodeProcess node, int i) {
        return send(node, HttpRequest.newBuilder(entity(node, key(i), "2/3")).DELETE());
    }

    /** The key read at 2/3, as "status body". */
    private Mono<String> read(NodeProcess node, int i) {
        return Mono.fromFuture(() -> http.sendAsync(HttpRequest.newBuilder(entity(node, key(i), "2/3")).timeout(Duration.ofSeconds(10))
                .build(), HttpResponse.BodyHandlers.ofString()))
                .map(response -> response.statusCode() + " " + response.body());
    }

    private Mono<Integer> send(NodeProcess node, HttpRequest.Builder request) {
        return Mono.fromFuture(() -> http.sendAsync(request.timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.discarding()))
                .map(HttpResponse::statusCode);
    }

    private static URI entity(NodeProcess node, String key, String replicas) {
        return URI.create(node.url() + "/v0/entity?id=" + key + "&replicas=" + replicas);
    }

    private HttpResponse<String> post(NodeProcess node, String path, String json) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(node.url() + path)).timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(json)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** Polls {@code path} on the node until its body passes; returns that body. */
    private String awaitBody(NodeProcess node, String path, java.util.function.Predicate<String> until, Duration atMost) throws Exception {
        long deadline = System.nanoTime() + atMost.toNanos();
        String body = "";
        while (System.nanoTime() < deadline) {
            HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create(node.url() + path)).timeout(Duration.ofSeconds(30))
                    .build(), HttpResponse.BodyHandlers.ofString());
            body = response.body();
            if (response.statusCode() == 200 && !body.isEmpty() && until.test(body)) {
                return body;
            }
            Thread.sleep(200);
        }
        throw new AssertionError(path + " on " + node.url() + " did not come to pass within " + atMost + "; last: " + body);
    }

    private static String field(String json, Pattern pattern) {
        Matcher matcher = pattern.matcher(json);
        if (!matcher.find()) {
            throw new AssertionError("no " + pattern + " in " + json);
        }
        return matcher.group(1);
    }

    private static String key(int i) {
        return "key-" + i;
    }

    /** About 100 bytes, different for each key and version. */
    private static String value(int i, int version) {
        return ("version " + version + " of " + key(i) + " ").repeat(4);
    }
}
