package io.ringkv.process;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Predicate;
import java.util.stream.IntStream;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.ringkv.record.Record;
import io.ringkv.support.NodeProcess;
import io.ringkv.support.ReplicaCensus;
import io.ringkv.support.WriteHistory;

/**
 * A whole zone lost, on six node processes in three zones (two each): with zones set, every key's
 * three replicas are in three zones (a census of what the stores hold), and both nodes of a zone
 * SIGKILLed at once under {@code 2/3} writes fail no request; with zones unset, some key has two
 * replicas in one of the same three groups, and the same outage fails requests. Both lose nothing
 * and converge when the zone comes back. The difference is the test's proof that it can fail.
 */
class ZoneOutageIT {

    private static final List<String> ZONES = List.of("zone-a", "zone-b", "zone-c");
    private static final int NODES = 6;
    private static final int CENSUS_KEYS = 10_000;
    private static final int WRITERS = 8;
    private static final int KEYS_PER_WRITER = 60;
    /** Writes acknowledged before the outage and after the zone is back. */
    private static final int LOAD_AROUND = 500;
    /** Writes acknowledged while the zone is down: some hundred keys each written several times. */
    private static final int LOAD_DURING = 1_000;
    private static final Duration LOAD_WITHIN = Duration.ofSeconds(90);
    private static final Duration CONVERGED_WITHIN = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    private final List<NodeProcess> nodes = new ArrayList<>();
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    @AfterEach
    void stop() {
        nodes.forEach(NodeProcess::close);
    }

    /** The zone the test puts node {@code i} in, told to it or not: nodes 0 and 3 are zone-a. */
    private static String zoneOf(int node) {
        return ZONES.get(node % ZONES.size());
    }

    @Test
    void withZonesEveryKeyIsInThreeZonesAndALostZoneFailsNoRequest() throws Exception {
        List<NodeProcess> defined = NodeProcess.define(NODES, "256m", dir, settings());
        for (int i = 0; i < NODES; i++) {
            nodes.add(defined.get(i).with("--ringkv.cluster.zone=" + zoneOf(i)));
        }
        startAll();
        // Zones travel in the PINGs: a write before a node heard a peer's zone places by what it
        // knew, and its copy stays where the ring then put it until cleanup (docs/operations.md, zones).
        Awaitility.await("every node knowing every member's zone").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
                .until(() -> nodes.stream().allMatch(node -> node.zonesKnown().size() == NODES));

        Map<String, List<String>> replicaZones = census();
        assertThat(keysWhere(replicaZones, zones -> zones.size() != 3)).as("keys without three copies").isEmpty();
        assertThat(keysWhere(replicaZones, ZoneOutageIT::sharesAZone)).as("keys with two copies in one zone").isEmpty();

        WriteHistory history = zoneOutage();
        assertThat(history.failures()).as("requests failed while zone-a was down").isEmpty();
        assertNothingLostAndConverged(history);
    }

    @Test
    void withoutZonesSomeKeysShareAZoneAndALostZoneFailsRequests() throws Exception {
        nodes.addAll(NodeProcess.define(NODES, "256m", dir, settings()));
        startAll();

        Map<String, List<String>> replicaZones = census();
        assertThat(keysWhere(replicaZones, zones -> zones.size() != 3)).as("keys without three copies").isEmpty();
        assertThat(keysWhere(replicaZones, ZoneOutageIT::sharesAZone)).as("keys with two copies in one zone").isNotEmpty();

        WriteHistory history = zoneOutage();
        assertThat(history.failures()).as("requests failed while zone-a was down").isNotEmpty();
        assertNothingLostAndConverged(history);
    }

    private static String[] settings() {
        return new String[] {"--ringkv.startup.warm-up-requests=50",
                // Often enough that what neither hints nor read repair fixed is fixed within the test.
                "--ringkv.repair.interval=10s"};
    }

    private void startAll() {
        long started = System.nanoTime();
        nodes.parallelStream().forEach(node -> node.startAndAwait(Duration.ofSeconds(180)));
        System.out.printf("six nodes ready in %d s%n", secondsSince(started));
    }

    private static long secondsSince(long nanos) {
        return Duration.ofNanos(System.nanoTime() - nanos).toSeconds();
    }

    /**
     * Writes {@link #CENSUS_KEYS} keys to all three replicas, then asks every node which it holds:
     * for each key, the zones (as this test numbers them) of the nodes that hold it.
     */
    private Map<String, List<String>> census() throws Exception {
        long started = System.nanoTime();
        List<String> keys = IntStream.range(0, CENSUS_KEYS).mapToObj(i -> "census-" + i).toList();
        ExecutorService clients = Executors.newFixedThreadPool(16);
        try {
            List<Callable<Void>> writes = keys.stream().<Callable<Void>>map(key -> () -> {
                writeToAll(nodes.get(Math.floorMod(key.hashCode(), NODES)), key);
                return null;
            }).toList();
            for (Future<Void> write : clients.invokeAll(writes)) {
                write.get();
            }
        } finally {
            clients.shutdownNow();
        }
        List<String> urls = nodes.stream().map(NodeProcess::url).toList();
        Map<String, Map<String, Record>> copies = ReplicaCensus.of(urls, keys);
        Map<String, List<String>> zones = new HashMap<>();
        copies.forEach((key, holders) -> zones.put(key, holders.keySet().stream().map(url -> zoneOf(urls.indexOf(url))).toList()));
        System.out.printf("census of %d keys in %d s: %d with two copies in one zone%n", keys.size(), secondsSince(started),
                keysWhere(zones, ZoneOutageIT::sharesAZone).size());
        return zones;
    }

    private static boolean sharesAZone(List<String> zones) {
        return zones.stream().distinct().count() < zones.size();
    }

    /** The keys whose copies' zones are so, each with those zones. */
    private static List<String> keysWhere(Map<String, List<String>> replicaZones, Predicate<List<String>> test) {
        return replicaZones.entrySet().stream().filter(entry -> test.test(entry.getValue()))
                .map(entry -> entry.getKey() + " in " + entry.getValue()).sorted().toList();
    }

    /** Writes the key at 3/3, again until all three replicas took it: on a busy machine one can be late. */
    private void writeToAll(NodeProcess coordinator, String key) {
        URI uri = URI.create(coordinator.url() + "/v0/entity?id=" + key + "&replicas=3/3");
        Awaitility.await(uri.toString()).pollDelay(Duration.ZERO).atMost(Duration.ofSeconds(60)).until(() -> {
            try {
                return http.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10)).PUT(HttpRequest.BodyPublishers.ofString(key))
                        .build(), HttpResponse.BodyHandlers.discarding()).statusCode() == 201;
            } catch (IOException e) {
                return false;
            }
        });
    }

    /**
     * Eight writers at {@code 2/3} through the nodes of zones b and c; both nodes of zone-a
     * SIGKILLed at once; load while it is down; the zone started again; load once it is back.
     */
    private WriteHistory zoneOutage() throws Exception {
        List<NodeProcess> zoneA = List.of(nodes.get(0), nodes.get(3));
        List<URI> through = IntStream.range(0, NODES).filter(i -> !zoneOf(i).equals("zone-a"))
                .mapToObj(i -> URI.create(nodes.get(i).url())).toList();
        long started = System.nanoTime();
        WriteHistory history = new WriteHistory("2/3");
        history.start(() -> through, WRITERS, KEYS_PER_WRITER);
        awaitAcknowledged(history, LOAD_AROUND, "before the outage");
        zoneA.forEach(NodeProcess::kill);
        awaitAcknowledged(history, history.acknowledged() + LOAD_DURING, "while zone-a is down");
        zoneA.parallelStream().forEach(node -> node.startAndAwait(Duration.ofSeconds(180)));
        awaitAcknowledged(history, history.acknowledged() + LOAD_AROUND, "after zone-a is back");
        history.stop();
        System.out.printf("zone-a SIGKILLed and back under load in %d s: outcomes %s%n", secondsSince(started), history.outcomes());
        return history;
    }

    /** Nothing acknowledged lost, and every replica holding the newest version of every key within 60 s. */
    private void assertNothingLostAndConverged(WriteHistory history) throws Exception {
        assertThat(history.lost(URI.create(nodes.get(1).url()))).as("acknowledged writes lost").isEmpty();
        List<String> urls = nodes.stream().map(NodeProcess::url).toList();
        long started = System.nanoTime();
        // Every key written has a copy on each of its three replicas (hints bring those written while
        // zone-a was down) and none elsewhere, and the three copies are one version: the newest.
        Awaitility.await().atMost(CONVERGED_WITHIN).pollInterval(Duration.ofSeconds(1)).untilAsserted(() ->
                assertThat(ReplicaCensus.of(urls, history.keys()).entrySet().stream()
                        .filter(key -> key.getValue().size() != 3 || key.getValue().values().stream().map(Record::timestamp).distinct().count() != 1)
                        .map(key -> key.getKey() + " held by " + key.getValue()).toList())
                        .as("keys not held by three replicas in one version").isEmpty());
        System.out.printf("every replica converged %d ms after the load stopped%n", Duration.ofNanos(System.nanoTime() - started).toMillis());
    }

    private static void awaitAcknowledged(WriteHistory history, long count, String when) {
        Awaitility.await().atMost(LOAD_WITHIN).pollInterval(Duration.ofMillis(100))
                .untilAsserted(() -> assertThat(history.acknowledged()).as("writes acknowledged " + when).isGreaterThanOrEqualTo(count));
    }
}
