package io.ringkv.support;

import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.awaitility.Awaitility;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.web.reactive.server.WebTestClient;

import io.ringkv.RingkvApplication;
import io.ringkv.record.Record;
import io.ringkv.ring.ClusterMembership;
import io.ringkv.storage.RocksStore;

/**
 * A real ringkv node inside the test JVM: the whole application on a loopback port with its own
 * data directory, which a test can stop and start again on the same data.
 */
public final class TestNode implements AutoCloseable {

    /** The cluster secret every test node gets unless a test gives its own. */
    public static final String SECRET = "test-cluster-secret";
    /** A join of a test's few keys takes milliseconds; this bounds one held up by a peer that does not answer. */
    private static final Duration JOIN_WITHIN = Duration.ofSeconds(60);

    private final int port;
    private final Map<String, Object> settings;
    private ConfigurableApplicationContext context;

    private TestNode(int port, Map<String, Object> settings) {
        this.port = port;
        this.settings = settings;
    }

    public static TestNode create(int port, Path dataDir, List<Integer> clusterPorts, Map<String, Object> extraSettings) {
        Map<String, Object> settings = new LinkedHashMap<>();
        settings.put("server.port", port);
        settings.put("ringkv.data-dir", dataDir.toString());
        settings.put("ringkv.cluster.self", url(port));
        settings.put("ringkv.cluster.peers", String.join(",", clusterPorts.stream().map(TestNode::url).toList()));
        settings.put("ringkv.cluster.secret", SECRET);
        // Generous for loaded CI machines; tests of timing set their own.
        settings.put("ringkv.replication.timeout", "5s");
        // A short warm-up: the code runs in every test, without costing each node seconds.
        settings.put("ringkv.startup.warm-up-requests", "20");
        settings.put("spring.lifecycle.timeout-per-shutdown-phase", "5s");
        // No client drain on stop: a test's clients are not behind a load balancer, and every stop would wait for it.
        settings.put("ringkv.shutdown.drain-delay", "0s");
        // Nodes start in parallel in one JVM and share logback's one LoggerContext, whose listener
        // list is a plain ArrayList: LogbackMetrics adding to it from two starting nodes at once failed
        // a start with "Index 1 out of bounds". A real node is alone in its JVM and keeps the metrics.
        settings.put("spring.autoconfigure.exclude",
                "org.springframework.boot.micrometer.metrics.autoconfigure.logging.logback.LogbackMetricsAutoConfiguration");
        settings.putAll(extraSettings);
        return new TestNode(port, settings);
    }

    /**
     * Starts the node and returns once it holds its ranges. A node whose store is new pulls them
     * first from peers that hold data: in a test that starts nodes one after the other, each but
     * the first. Tests that watch a join use {@link #startJoining()}.
     */
    public TestNode start() {
        startJoining();
        ClusterMembership membership = bean(ClusterMembership.class);
        Awaitility.await(url() + " holding its ranges").atMost(JOIN_WITHIN).pollInterval(Duration.ofMillis(20))
                .until(() -> membership.isKnown() && membership.state(membership.self()).holdsData());
        return this;
    }

    /**
     * Nodes of a new cluster say JOINING until each knows it has nothing to pull, and tell the
     * others when they turn NORMAL; a test starts once every node has heard it from every other
     * (one that missed it would hear it at its next probe, seconds later, and until then would
     * not count the other as a replica: a write at n/n would fail at once).
     */
    public static void awaitEachSeesEveryOtherHoldData(List<TestNode> nodes) {
        Awaitility.await("every node seeing every other hold data").atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(20))
                .until(() -> nodes.stream().allMatch(node -> {
                    ClusterMembership view = node.bean(ClusterMembership.class);
                    return nodes.stream().allMatch(other -> view.state(other.url()).holdsData());
                }));
    }

    /** Starts the node and returns once its context runs: a node that joins may still be pulling its ranges. */
    public TestNode startJoining() {
        if (context == null) {
            // As command-line arguments, the way operators give them, so they override application.yml.
            String[] args = settings.entrySet().stream().map(e -> "--" + e.getKey() + "=" + e.getValue()).toArray(String[]::new);
            context = new SpringApplicationBuilder(RingkvApplication.class).run(args);
        }
        return this;
    }

    /** The same node (port, data directory) with some settings changed, not started: to restart it differently. */
    public TestNode withSettings(Map<String, Object> changed) {
        Map<String, Object> merged = new LinkedHashMap<>(settings);
        merged.putAll(changed);
        return new TestNode(port, merged);
    }

    public void stop() {
        if (context != null) {
            context.close();
            context = null;
        }
    }

    public boolean isRunning() {
        return context != null;
    }

    public int port() {
        return port;
    }

    public String url() {
        return url(port);
    }

    public <T> T bean(Class<T> type) {
        return context.getBean(type);
    }

    /** What this node's own store holds for the key (tombstones included), read directly: a replica's copy. */
    public Optional<Record> stored(String key) {
        return bean(RocksStore.class).get(key.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    public WebTestClient client() {
        return WebTestClient.bindToServer()
                .baseUrl(url())
                .responseTimeout(Duration.ofSeconds(60))
                .codecs(codecs -> codecs.defaultCodecs().maxInMemorySize(16 * 1024 * 1024))
                .build();
    }

    @Override
    public void close() {
        stop();
    }

    static String url(int port) {
        return "http://127.0.0.1:" + port;
    }

    /** Ports that were free a moment ago, for nodes: {@link TestPorts#free}. */
    public static List<Integer> freePorts(int count) {
        return TestPorts.free(count);
    }
}
