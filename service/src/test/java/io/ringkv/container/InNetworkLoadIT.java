package io.ringkv.container;

import static io.ringkv.support.TestCertificates.servedSerial;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.extension.TestWatcher;
import org.junit.jupiter.api.io.TempDir;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.output.OutputFrame;
import org.testcontainers.containers.startupcheck.StartupCheckStrategy;
import org.testcontainers.images.builder.Transferable;
import org.testcontainers.utility.DockerImageName;
import org.testcontainers.utility.DockerStatus;
import org.testcontainers.utility.MountableFile;

import com.github.dockerjava.api.DockerClient;

import io.ringkv.container.RingkvCluster.Node;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * k6 runs inside the cluster's network, as the chart's load Job does in Kubernetes: the k6 image
 * (FROM scratch, {@code bin/build-k6-image}) runs as a container on the Docker network of three
 * nodes and reaches them by their names ({@code https://nodeN:8080}, network aliases that resolve
 * only inside that network). The nodes run as the chart installs them by default, with TLS on
 * every port and a token required ({@link SecuredNodes}); k6 trusts their CA and sends a token.
 * The scripts of {@code loadtest/} are copied into each k6 container.
 *
 * <p>A short, small run: {@code fill.js} writes a small key space, then {@code kv.js} offers a
 * mixed load with thresholds, which must hold (exit 0); and a run with a threshold no request can
 * meet must fail (exit 99), so that the test would notice k6 not evaluating thresholds. Besides
 * the exit code, the k6 summary (JSON, copied out of the container) is checked. Then the nodes'
 * certificate is replaced on disk, as cert-manager renews it, while k6 runs: every port serves the
 * new one and no request fails.
 */
@ExtendWith(DockerEngineCondition.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class InNetworkLoadIT {

    private static final String SECRET = "it-" + UUID.randomUUID();
    private static final Duration AGREEMENT = Duration.ofSeconds(60);
    private static final String[] HOSTS = {"node1", "node2", "node3"};

    private static final int KEYSPACE = 500;
    private static final int RATE = 50;
    private static final int SECONDS = 10;
    /**
     * The p99 latency, in ms, a run must stay under. The benchmark's 10 ms is a target for a quiet,
     * dedicated machine; CI shares two cores between three JVMs (C1 only, a 256 MB heap), k6 and
     * other work, and a mixed run at 50/s saw a p99 of 400 ms there when a benchmark ran alongside.
     * A pause of the machine must not fail the build; a failed request (k6 allows 1%, the test
     * none) or a timeout (10 s) still does, and so does k6 not evaluating thresholds (the second
     * test).
     */
    private static final int P99_MS = 1000;
    private static final Map<String, String> CI_THRESHOLDS = Map.of("P99_MS", String.valueOf(P99_MS), "MAX_ERROR_RATE", "0.01");

    /** k6 exits with this code when a threshold is missed. */
    private static final int THRESHOLDS_MISSED = 99;
    /** Where k6 writes its summary: a file the test puts there, writable by k6's uid (the directory is not). */
    private static final String SUMMARY = "/scripts/summary.json";
    /** The nodes' CA, which k6 trusts. */
    private static final String CA_FILE = "/scripts/ca.crt";
    private static final JsonMapper JSON = JsonMapper.builder().build();

    private static RingkvCluster cluster;
    private static SecuredNodes secured;
    private static String k6Image;

    @RegisterExtension
    static final TestWatcher printLogsOnFailure = RingkvCluster.printLogsOnFailure(() -> cluster);

    @BeforeAll
    static void startThreeNodes(@TempDir Path files) {
        String image = RingkvImage.name();
        k6Image = K6Image.name();
        secured = new SecuredNodes(files.resolve("secured"), HOSTS);
        cluster = new RingkvCluster(image, SECRET, RingkvCluster.dnsDiscovery(SECRET), secured);
        cluster.start(HOSTS);
        // REPLICAS=2/3 needs a ring of three everywhere.
        cluster.awaitRing(AGREEMENT, HOSTS);
    }

    @AfterAll
    static void removeTheCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    @Order(1)
    void k6InTheNetworkFillsTheStoreAndMeetsItsThresholdsUnderMixedLoad() {
        // Eight writers, not the default 32: enough for 500 keys, and gentler on a shared machine.
        K6Run fill = k6("fill.js", Duration.ofSeconds(60),
                Map.of("KEYSPACE", String.valueOf(KEYSPACE), "REPLICAS", "2/3", "FILL_VUS", "8"));
        assertThat(fill.exitCode()).as("fill.js's exit code").isZero();
        assertThat(fill.summary().at("/metrics/checks/values/passes").asLong()).as("keys written (checks passed)").isEqualTo(KEYSPACE);
        assertThat(fill.summary().at("/metrics/checks/values/fails").asLong()).as("keys not written (checks failed)").isZero();

        K6Run run = k6("kv.js", Duration.ofSeconds(60), mixedLoad(SECONDS));
        JsonNode metrics = assertEveryRequestAnswered(run, SECONDS);
        long requests = metrics.at("/http_reqs/values/count").asLong();
        // About half GETs, of filled keys (200 only), and half PUTs (201). Per status, not per check:
        // with lib.js's system tags (no "group"), k6 1.8 leaves root_group.checks empty.
        long gets = metrics.at("/http_reqs{status:200}/values/count").asLong(0);
        long puts = metrics.at("/http_reqs{status:201}/values/count").asLong(0);
        assertThat(gets + puts).as("requests answered 200 (%d) or 201 (%d)", gets, puts).isEqualTo(requests);
        assertThat(List.of(gets, puts)).as("requests answered 200 and 201").allSatisfy(count -> assertThat(count).isGreaterThan(requests / 4));
        assertThatEveryThresholdHeld(run.summary(), "http_req_duration{op:get} p(99)<" + P99_MS, "http_req_duration{op:put} p(99)<" + P99_MS);

        // The text summary on stdout says the same.
        Matcher printed = Pattern.compile("(?m)^\\s*http_reqs \\.+ (\\d+) ").matcher(run.log());
        assertThat(printed.find()).as("a line of http_reqs in k6's text summary").isTrue();
        assertThat(Long.parseLong(printed.group(1))).as("http_reqs in the text summary").isEqualTo(requests);
        assertThat(run.log()).contains("[ok: p(99)<" + P99_MS + "]").doesNotContain("FAILED");
    }

    @Test
    @Order(2)
    void aThresholdNoRequestCanMeetMakesK6Fail() {
        // A p99 of a microsecond: every threshold but this one holds, and k6 must exit 99.
        K6Run run = k6("kv.js", Duration.ofSeconds(60), Map.of("SCENARIO", "put", "REPLICAS", "2/3",
                "KEYSPACE", String.valueOf(KEYSPACE), "RATE", "20", "DURATION", "2s",
                "P99_MS", "0.001", "MAX_ERROR_RATE", "0.01"));
        assertThat(run.exitCode()).as("kv.js's exit code with P99_MS=0.001").isEqualTo(THRESHOLDS_MISSED);

        JsonNode metrics = run.summary().path("metrics");
        assertThat(metrics.at("/http_reqs/values/count").asLong()).as("requests made").isPositive();
        assertThat(metrics.at("/http_req_duration/thresholds/p(99)<0.001/ok").asBoolean(true))
                .as("the p99 threshold's outcome").isFalse();
        assertThat(metrics.at("/http_req_failed/thresholds/rate<0.01/ok").asBoolean(false))
                .as("the error-rate threshold's outcome (the run failed on latency alone)").isTrue();
        assertThat(run.log()).contains("FAILED: p(99)<0.001");
    }

    /**
     * cert-manager renews a certificate by replacing the Secret's files; the nodes must serve the
     * new certificate on every port without failing a request. k6 opens a new connection (and TLS
     * handshake) for each request, so the load crosses the change on new connections as well as
     * on the nodes' connections to each other, which stay open.
     */
    @Test
    @Order(3)
    void certificatesReplacedOnDiskUnderK6LoadAreServedWithoutAFailedRequest() throws Exception {
        int seconds = 20;
        Map<String, String> mixed = mixedLoad(seconds);
        mixed.put("K6_NO_CONNECTION_REUSE", "true");
        BigInteger old = secured.serial();
        CompletableFuture<K6Run> load = CompletableFuture.supplyAsync(() -> k6("kv.js", Duration.ofSeconds(seconds + 60), mixed));
        // k6 starts in a second or two: replace the files a third of the way into its run.
        Thread.sleep(Duration.ofSeconds(seconds / 3));
        assertThat(load).as("k6 still running when the certificate is replaced").isNotDone();
        BigInteger renewed = secured.replaceCertificate();
        assertThat(renewed).isNotEqualTo(old);
        await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
            for (Node node : cluster.running()) {
                assertThat(servedSerial(secured.clientContext(), node.api().getPort())).as("%s's public port", node).isEqualTo(renewed);
                assertThat(servedSerial(secured.clientContext(), node.management().getPort())).as("%s's management port", node)
                        .isEqualTo(renewed);
                assertThat(servedSerial(secured.memberContext(), node.clusterAddress().getPort())).as("%s's cluster port", node)
                        .isEqualTo(renewed);
            }
        });
        assertThat(load).as("k6 still running when every port serves the new certificate").isNotDone();

        JsonNode metrics = assertEveryRequestAnswered(load.get(seconds + 90L, TimeUnit.SECONDS), seconds);
        assertThat(metrics.at("/http_req_tls_handshaking/values/min").asDouble())
                .as("the shortest TLS handshake of a request, in ms (0: some request reused a connection)").isPositive();
    }

    /** kv.js's mixed load at {@link #RATE} over the filled key space, with the CI's thresholds. */
    private static Map<String, String> mixedLoad(int seconds) {
        Map<String, String> mixed = new LinkedHashMap<>(CI_THRESHOLDS);
        mixed.putAll(Map.of("SCENARIO", "mixed", "REPLICAS", "2/3", "KEYSPACE", String.valueOf(KEYSPACE),
                "RATE", String.valueOf(RATE), "DURATION", seconds + "s"));
        return mixed;
    }

    /**
     * Fails unless the run met its thresholds and made every request of its constant arrival rate
     * ({@link #RATE} × seconds iterations, one request each; fewer only if it ran out of VUs,
     * which would show the nodes answering slowly), none failed; its summary's metrics.
     */
    private static JsonNode assertEveryRequestAnswered(K6Run run, int seconds) {
        assertThat(run.exitCode()).as("kv.js's exit code (99: a threshold missed)").isZero();
        JsonNode metrics = run.summary().path("metrics");
        long requests = metrics.at("/http_reqs/values/count").asLong();
        assertThat(requests).as("requests made").isBetween(RATE * seconds - 5L, RATE * seconds + 5L);
        assertThat(metrics.at("/dropped_iterations/values/count").asLong(0)).as("iterations dropped").isZero();
        assertThat(metrics.at("/http_req_failed/values/passes").asLong()).as("requests failed").isZero();
        assertThat(metrics.at("/checks/values/fails").asLong()).as("checks failed").isZero();
        assertThat(metrics.at("/checks/values/passes").asLong()).as("checks passed (one a request)").isEqualTo(requests);
        return metrics;
    }

    /** Fails unless the summary lists the general thresholds and these, and every threshold held. */
    private static void assertThatEveryThresholdHeld(JsonNode summary, String... more) {
        Map<String, Boolean> outcomes = new LinkedHashMap<>();
        summary.path("metrics").properties().forEach(metric -> metric.getValue().path("thresholds").properties()
                .forEach(threshold -> outcomes.put(metric.getKey() + " " + threshold.getKey(),
                        threshold.getValue().path("ok").asBoolean(false))));
        assertThat(outcomes).as("the thresholds' outcomes").containsKeys(
                "http_req_duration p(99)<" + P99_MS, "http_req_failed rate<0.01", "checks rate>0.99")
                .containsKeys(more);
        assertThat(outcomes).as("the thresholds' outcomes").doesNotContainValue(false);
    }

    /** What a k6 container left: its exit code, its output and its summary (JSON). */
    private record K6Run(long exitCode, String log, JsonNode summary) {
    }

    /**
     * Runs a script of loadtest/ in a k6 container on the cluster's network, against every node by
     * its name, and waits (at most {@code timeout}) until it exits; its output goes to the test's
     * log as it comes.
     */
    private static K6Run k6(String script, Duration timeout, Map<String, String> settings) {
        Path loadtest = RingkvImage.repositoryRoot().resolve("loadtest");
        String nodes = String.join(",", cluster.running().stream().map(Node::name).toList());
        String prefix = "  [k6 " + script + "] ";
        Instant start = Instant.now();
        System.out.printf("[container tests] k6 run %s against %s with %s%n", script, nodes, settings);
        try (GenericContainer<?> k6 = new GenericContainer<>(DockerImageName.parse(k6Image))) {
            for (String file : List.of("lib.js", "kv.js", "fill.js")) {
                k6.withCopyFileToContainer(MountableFile.forHostPath(loadtest.resolve(file), 0644), "/scripts/" + file);
            }
            k6.withCopyFileToContainer(MountableFile.forHostPath(secured.caFile(), 0644), CA_FILE);
            // The image has no writable directory for uid 65534 (FROM scratch: not even /tmp).
            k6.withCopyToContainer(Transferable.of(new byte[0], 0100666), SUMMARY)
                    .withNetwork(cluster.network())
                    .withEnv(settings)
                    .withEnv("NODES", nodes)
                    // Go's TLS (k6's) trusts the certificates of this file instead of the system's.
                    .withEnv("SSL_CERT_FILE", CA_FILE)
                    .withEnv("RINGKV_TOKEN", secured.token())
                    .withEnv("SUMMARY_JSON", SUMMARY)
                    // --quiet: no banner and no progress every second (fill.js logs its own).
                    .withCommand("run", "--quiet", script)
                    .withLogConsumer(frame -> {
                        if (frame.getType() != OutputFrame.OutputType.END) {
                            System.out.println(prefix + frame.getUtf8StringWithoutLineEnding());
                        }
                    })
                    .withStartupCheckStrategy(new UntilExited().withTimeout(timeout))
                    .start();
            long exitCode = k6.getCurrentContainerInfo().getState().getExitCodeLong();
            String log = k6.getLogs();
            String summary = k6.copyFileFromContainer(SUMMARY, in -> new String(in.readAllBytes(), StandardCharsets.UTF_8));
            System.out.printf("[container tests] k6 run %s exited %d after %.1f s%n", script, exitCode,
                    Duration.between(start, Instant.now()).toMillis() / 1000.0);
            assertThat(summary).as("the summary k6 wrote to %s (exit %d); its output:%n%s", SUMMARY, exitCode, log).isNotBlank();
            return new K6Run(exitCode, log, JSON.readTree(summary));
        }
    }

    /** "Started" once the container has exited, whatever its exit code (the test looks at that). */
    private static final class UntilExited extends StartupCheckStrategy {
        @Override
        public StartupStatus checkStartupState(DockerClient docker, String containerId) {
            return DockerStatus.isContainerStopped(getCurrentState(docker, containerId))
                    ? StartupStatus.SUCCESSFUL
                    : StartupStatus.NOT_YET_KNOWN;
        }
    }
}
