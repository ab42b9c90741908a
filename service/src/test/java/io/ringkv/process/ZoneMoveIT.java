package io.ringkv.process;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.IntStream;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.ringkv.record.Record;
import io.ringkv.ring.HashRing;
import io.ringkv.ring.Member;
import io.ringkv.support.NodeProcess;
import io.ringkv.support.ReplicaCensus;
import io.ringkv.support.WriteHistory;

/**
 * A third zone added to a two-zone cluster by moving a node there, under load, on four node
 * processes: zones a, b, a, b, where every key has two replicas in one zone; 1,000 keys written to
 * all three replicas before, and never again, repair off. Under eight writers at
 * {@code 2/3} through the other three, each writer reading one of its keys back after each write,
 * the fourth is restarted in zone c: it hands its data over, then joins in zone c, which then holds
 * a replica of every key. No request fails, no read misses an acknowledged write, none is lost, and afterwards every key written is placed in three zones by every node, each of
 * its three replicas holding its newest version.
 */
class ZoneMoveIT {

    private static final List<String> ZONES_BEFORE = List.of("zone-a", "zone-b", "zone-a", "zone-b");
    private static final int MOVING = 3;
    private static final String NEW_ZONE = "zone-c";
    private static final int KEYS_BEFORE = 1_000;
    private static final int WRITERS = 8;
    private static final int KEYS_PER_WRITER = 60;
    /** Writes acknowledged before the move, and after it. */
    private static final int LOAD_AROUND = 300;
    private static final Duration LOAD_WITHIN = Duration.ofSeconds(90);
    private static final Duration MOVED_WITHIN = Duration.ofSeconds(120);
    private static final Duration CONVERGED_WITHIN = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    private final List<NodeProcess> nodes = new ArrayList<>();

    @AfterEach
    void stop() {
        nodes.forEach(NodeProcess::close);
    }

    @Test
    void aNodeMovedToANewZoneUnderLoadFailsNothingAndLosesNothing() throws Exception {
        List<NodeProcess> defined = NodeProcess.define(ZONES_BEFORE.size(), "256m", dir, "--ringkv.startup.warm-up-requests=50",
                // No repair: every copy a replica holds afterwards came from the writes, hints and the move's hand-over.
                "--ringkv.repair.enabled=false");
        for (int i = 0; i < defined.size(); i++) {
            nodes.add(defined.get(i).with("--ringkv.cluster.zone=" + ZONES_BEFORE.get(i)));
        }
        long started = System.nanoTime();
        nodes.parallelStream().forEach(node -> node.startAndAwait(Duration.ofSeconds(180)));
        awaitZonesKnown(zones(ZONES_BEFORE));
        System.out.printf("zone move: four nodes in two zones ready in %d s%n", secondsSince(started));

        List<String> written = writeAllBeforeTheMove();
        List<URI> through = IntStream.range(0, nodes.size()).filter(i -> i != MOVING).mapToObj(i -> URI.create(nodes.get(i).url())).toList();
        WriteHistory history = new WriteHistory("2/3").readingBack();
        history.start(() -> through, WRITERS, KEYS_PER_WRITER);
        awaitAcknowledged(history, LOAD_AROUND, "before the move");

        long moveBegun = System.nanoTime();
        nodes.get(MOVING).terminate(Duration.ofSeconds(60));
        NodeProcess moved = defined.get(MOVING).with("--ringkv.cluster.zone=" + NEW_ZONE);
        nodes.set(MOVING, moved);
        // Ready once it has moved: handed its data over, then pulled its ranges in the new zone.
        moved.startAndAwait(MOVED_WITHIN);
        List<String> zonesAfter = new ArrayList<>(ZONES_BEFORE);
        zonesAfter.set(MOVING, NEW_ZONE);
        Map<String, String> placed = zones(zonesAfter);
        awaitZonesKnown(placed);
        System.out.printf("zone move: restarted in %s, moved and known everywhere in %d s%n", NEW_ZONE, secondsSince(moveBegun));
        awaitAcknowledged(history, history.acknowledged() + LOAD_AROUND, "after the move");
        history.stop();
        System.out.printf("zone move: writes %s, reads %s, %d stale%n", history.outcomes(), history.readOutcomes(),
                history.staleReads().size());

        assertThat(history.failures()).as("writes failed through the move").isEmpty();
        assertThat(history.readFailures()).as("reads failed through the move").isEmpty();
        assertThat(history.staleReads()).as("reads that missed an acknowledged write").isEmpty();
        assertThat(history.lost(through.get(0))).as("acknowledged writes lost").isEmpty();
        List<String> keys = new ArrayList<>(written);
        keys.addAll(history.keys());
        assertPlacedInThreeZonesAndConverged(keys, placed);
    }

    /**
     * Keys written to all three replicas before the move and not again: the move's hand-over is the
     * only way those its new replicas lack can reach them (repair is off).
     */
    private List<String> writeAllBeforeTheMove() throws Exception {
        List<String> keys = IntStream.range(0, KEYS_BEFORE).mapToObj(i -> "before-" + i).toList();
        HttpClient http = HttpClient.newHttpClient();
        for (String key : keys) {
            URI uri = URI.create(nodes.get(Math.floorMod(key.hashCode(), nodes.size())).url() + "/v0/entity?id=" + key + "&replicas=3/3");
            assertThat(http.send(HttpRequest.newBuilder(uri).PUT(HttpRequest.BodyPublishers.ofString(key)).build(),
                    HttpResponse.BodyHandlers.discarding()).statusCode()).as(key).isEqualTo(201);
        }
        return keys;
    }

    /**
     * Every key written is placed, on the ring every node now holds, on three members in three
     * zones, and within {@link #CONVERGED_WITHIN} each of them holds the newest version any node
     * holds (a node that lost a key's replica may still hold a copy until cleanup).
     */
    private void assertPlacedInThreeZonesAndConverged(List<String> keys, Map<String, String> zones) throws Exception {
        HashRing ring = new HashRing(zones.entrySet().stream().map(member -> Member.inZone(member.getKey(), member.getValue())).toList(),
                HashRing.DEFAULT_VNODES);
        List<String> urls = nodes.stream().map(NodeProcess::url).toList();
        long started = System.nanoTime();
        Awaitility.await().atMost(CONVERGED_WITHIN).pollInterval(Duration.ofSeconds(1)).untilAsserted(() -> {
            List<String> wrong = new ArrayList<>();
            ReplicaCensus.of(urls, keys).forEach((key, copies) -> {
                List<String> replicas = ring.replicasFor(key.getBytes(StandardCharsets.UTF_8), 3);
                long newest = copies.values().stream().mapToLong(Record::timestamp).max().orElse(-1);
                boolean inThreeZones = replicas.stream().map(zones::get).distinct().count() == 3;
                boolean newestOnEach = replicas.stream().allMatch(replica -> copies.containsKey(replica)
                        && copies.get(replica).timestamp() == newest);
                if (!inThreeZones || !newestOnEach) {
                    wrong.add(key + " placed on " + replicas + ", held by " + copies);
                }
            });
            assertThat(wrong).as("keys not in three zones, or not in their newest version on each replica").isEmpty();
        });
        System.out.printf("zone move: every key in three zones, its replicas converged %d ms after the load stopped%n",
                Duration.ofNanos(System.nanoTime() - started).toMillis());
    }

    /** Each node's url, with the zone of the same index. */
    private Map<String, String> zones(List<String> zones) {
        Map<String, String> byNode = new TreeMap<>();
        for (int i = 0; i < nodes.size(); i++) {
            byNode.put(nodes.get(i).url(), zones.get(i));
        }
        return byNode;
    }

    /** Zones travel in the PINGs, once per discovery round (5 s): every node placing every member in its zone. */
    private void awaitZonesKnown(Map<String, String> zones) {
        Awaitility.await("every node knowing every member's zone").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
                .until(() -> nodes.stream().allMatch(node -> node.zonesKnown().equals(zones)));
    }

    private static void awaitAcknowledged(WriteHistory history, long count, String when) {
        Awaitility.await().atMost(LOAD_WITHIN).pollInterval(Duration.ofMillis(100))
                .untilAsserted(() -> assertThat(history.acknowledged()).as("writes acknowledged " + when).isGreaterThanOrEqualTo(count));
    }

    private static long secondsSince(long nanos) {
        return Duration.ofNanos(System.nanoTime() - nanos).toSeconds();
    }
}
