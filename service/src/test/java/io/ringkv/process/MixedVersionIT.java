package io.ringkv.process;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.ringkv.support.NodeProcess;
import io.ringkv.support.WriteHistory;

/**
 * A rolling upgrade from the previous version: two nodes of it and one of this version serve
 * writes and reads at {@code 2/3} through every node; then the old nodes are restarted one at a
 * time on this version, on their data. Every request is served (but those to the node restarting
 * that it refused or dropped as it stopped), nothing acknowledged is lost, and once all run this
 * version every node knows the zone of the member that joined in one, which the previous version
 * neither had nor told; the upgraded members, whose stores joined without a zone, keep none.
 */
class MixedVersionIT {

    /**
     * The previous version: main before members had attributes (issue 42). Move it forward when
     * the peer protocol changes again, to the last commit before that change.
     */
    private static final String PREVIOUS_VERSION = "0df4d5c";

    private static final List<String> ZONES = List.of("zone-a", "zone-b", "zone-c");
    private static final int WRITERS = 6;
    private static final int KEYS_PER_WRITER = 60;
    private static final int READERS = 2;
    /** Writes acknowledged before the upgrade, and again after it. */
    private static final int LOAD_BEFORE_AND_AFTER = 500;
    private static final Duration LOAD_WITHIN = Duration.ofSeconds(60);

    private static String previousJar;

    @TempDir
    Path dir;

    /** Replaced one by one as they are upgraded, while the load reads them. */
    private final List<NodeProcess> nodes = new CopyOnWriteArrayList<>();
    /** The nodes being restarted: from their SIGTERM until they serve again. */
    private final Set<String> restarting = ConcurrentHashMap.newKeySet();
    private final WriteHistory history = new WriteHistory("2/3", node -> restarting.contains(node.toString()));
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private final Map<String, Long> readFailures = new ConcurrentHashMap<>();
    private final LongAdder readsServed = new LongAdder();
    private final AtomicBoolean reading = new AtomicBoolean(true);

    /** The previous version's jar: built once per machine (bin/old-jar), a minute or two the first time. */
    @BeforeAll
    static void buildPreviousVersion() throws Exception {
        Path oldJar = Path.of(System.getProperty("ringkv.launcher")).resolveSibling("old-jar");
        Process build = new ProcessBuilder(oldJar.toString(), PREVIOUS_VERSION)
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        String path = new String(build.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        if (!build.waitFor(15, TimeUnit.MINUTES) || build.exitValue() != 0) {
            build.destroyForcibly();
            throw new IllegalStateException("bin/old-jar " + PREVIOUS_VERSION + " failed; its output is above");
        }
        previousJar = path;
    }

    @AfterEach
    void stop() {
        reading.set(false);
        nodes.forEach(NodeProcess::close);
    }

    @Test
    void aRollingUpgradeFromThePreviousVersionServesEveryRequestLosesNothingAndSpreadsTheZones() throws Exception {
        List<NodeProcess> defined = NodeProcess.define(3, "256m", dir, "--ringkv.startup.warm-up-requests=50");
        long started = System.nanoTime();
        // The previous version knows no ringkv.cluster.zone: it would refuse to start with one.
        nodes.add(defined.get(0).onJar(previousJar));
        nodes.add(defined.get(1).onJar(previousJar));
        nodes.add(zoned(defined, 2));
        nodes.parallelStream().forEach(node -> node.startAndAwait(Duration.ofSeconds(120)));
        System.out.printf("mixed versions: cluster of two previous and one new node up in %d s%n", secondsSince(started));

        history.start(() -> nodes.stream().map(node -> URI.create(node.url())).toList(), WRITERS, KEYS_PER_WRITER);
        List<Thread> readers = new ArrayList<>();
        for (int i = 0; i < READERS; i++) {
            readers.add(Thread.ofVirtual().start(this::readUntilStopped));
        }
        awaitAcknowledged(LOAD_BEFORE_AND_AFTER, "before the upgrade");
        // A value that expires would reach the previous version's replicas as a record they refuse.
        assertThat(putWithTtl(nodes.get(2))).as("a ttl through the new node while old ones run")
                .startsWith("503 ").contains("not every member runs a version that keeps values that expire");
        long upgrade = System.nanoTime();
        for (int i = 0; i < 2; i++) {
            NodeProcess old = nodes.get(i);
            restarting.add(old.url());
            old.terminate(Duration.ofSeconds(60));
            NodeProcess upgraded = zoned(defined, i);
            nodes.set(i, upgraded);
            upgraded.startAndAwait(Duration.ofSeconds(120));
            restarting.remove(old.url());
        }
        System.out.printf("mixed versions: both previous nodes upgraded in %d s%n", secondsSince(upgrade));
        awaitAcknowledged(history.acknowledged() + LOAD_BEFORE_AND_AFTER, "after the upgrade");
        history.stop();
        reading.set(false);
        for (Thread reader : readers) {
            reader.join();
        }

        System.out.printf("mixed versions: writes %s; %d reads served, failed %s%n", history.outcomes(), readsServed.sum(), readFailures);
        assertThat(readsServed.sum()).as("reads served").isPositive();
        assertThat(history.failures()).as("writes not served through the upgrade (but those to the node restarting)").isEmpty();
        assertThat(readFailures).as("reads not served through the upgrade (but those to the node restarting)").isEmpty();
        assertThat(history.lost(URI.create(nodes.get(0).url()))).as("acknowledged writes lost in the upgrade").isEmpty();
        // The upgraded nodes' stores joined the cluster without a zone: they keep none, whatever
        // their setting says (a zone set in place would move their keys' replicas without the
        // data). The node that joined with one keeps it.
        Map<String, String> zones = new TreeMap<>(Map.of(nodes.get(2).url(), ZONES.get(2)));
        // Peers tell their zones as they answer each other's pings, once per discovery round (5 s).
        Awaitility.await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
            for (NodeProcess node : nodes) {
                assertThat(node.zonesKnown()).as("the members' zones as %s knows them", node.url()).isEqualTo(zones);
            }
        });
        for (NodeProcess node : nodes) {
            assertThat(putWithTtl(node)).as("a ttl through %s once all run this version", node.url()).startsWith("201 ");
        }
        System.out.printf("mixed versions: %d writes acknowledged, 0 lost, zones known everywhere, kept where joined; %d s in all%n",
                history.acknowledged(), secondsSince(started));
    }

    /** The node of this version, with its zone. */
    private static NodeProcess zoned(List<NodeProcess> defined, int index) {
        return defined.get(index).with("--ringkv.cluster.zone=" + ZONES.get(index));
    }

    /** A PUT with a ttl through the node: its status and body. */
    private String putWithTtl(NodeProcess node) throws IOException, InterruptedException {
        HttpResponse<String> answer = http.send(HttpRequest.newBuilder(URI.create(node.url() + "/v0/entity?id=expiring&ttl=1h"))
                .PUT(HttpRequest.BodyPublishers.ofString("value")).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
        return answer.statusCode() + " " + answer.body();
    }

    /** Reads the writers' keys through random nodes until the load stops, counting what was not served. */
    private void readUntilStopped() {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        while (reading.get()) {
            NodeProcess node = nodes.get(random.nextInt(nodes.size()));
            String url = node.url();
            URI uri = URI.create(url + "/v0/entity?id=w" + random.nextInt(WRITERS) + "-k" + random.nextInt(KEYS_PER_WRITER)
                    + "&replicas=2/3");
            try {
                int status = http.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(3)).build(),
                        HttpResponse.BodyHandlers.discarding()).statusCode();
                if (status == 200 || status == 404) {
                    readsServed.increment();
                } else {
                    readFailures.merge("HTTP " + status, 1L, Long::sum);
                }
            } catch (ConnectException e) {
                if (!restarting.contains(url)) {
                    readFailures.merge("refused by a running node", 1L, Long::sum);
                }
            } catch (IOException e) {
                if (!restarting.contains(url) || e instanceof HttpTimeoutException) {
                    readFailures.merge(e.getClass().getSimpleName() + ": " + e.getMessage(), 1L, Long::sum);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private void awaitAcknowledged(long count, String when) {
        Awaitility.await().atMost(LOAD_WITHIN).pollInterval(Duration.ofMillis(100))
                .untilAsserted(() -> assertThat(history.acknowledged()).as("writes acknowledged " + when).isGreaterThanOrEqualTo(count));
    }

    private static long secondsSince(long nanos) {
        return Duration.ofNanos(System.nanoTime() - nanos).toSeconds();
    }
}
