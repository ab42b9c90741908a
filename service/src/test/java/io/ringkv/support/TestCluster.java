package io.ringkv.support;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.awaitility.Awaitility;
import org.springframework.test.web.reactive.server.WebTestClient;

import io.ringkv.ring.ClusterMembership;

/** Several {@link TestNode}s that know each other, each on its own port and data directory. */
public final class TestCluster implements AutoCloseable {

    private final List<TestNode> nodes;

    private TestCluster(List<TestNode> nodes) {
        this.nodes = nodes;
    }

    public static TestCluster start(int size, Path dataRoot) {
        return start(size, dataRoot, Map.of());
    }

    public static TestCluster start(int size, Path dataRoot, Map<String, Object> extraSettings) {
        List<Integer> ports = TestNode.freePorts(size);
        List<TestNode> nodes = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            nodes.add(TestNode.create(ports.get(i), dataRoot.resolve("node" + i), ports, extraSettings));
        }
        TestCluster cluster = new TestCluster(nodes);
        try {
            nodes.parallelStream().forEach(TestNode::start);
            cluster.awaitEveryNodeSeesEveryOtherHoldData();
        } catch (RuntimeException e) {
            cluster.close();
            throw e;
        }
        return cluster;
    }

    /**
     * Nodes of a new cluster say JOINING until each knows it has nothing to pull, and tell the
     * others when they turn NORMAL; a test starts once every node has heard it from every other
     * (one that missed it would hear it at its next probe, seconds later).
     */
    private void awaitEveryNodeSeesEveryOtherHoldData() {
        Awaitility.await("every node seeing every other hold data").atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(20))
                .until(() -> nodes.stream().allMatch(node -> {
                    ClusterMembership view = node.bean(ClusterMembership.class);
                    return nodes.stream().allMatch(other -> view.state(other.url()).holdsData());
                }));
    }

    public TestNode node(int index) {
        return nodes.get(index);
    }

    public WebTestClient client(int index) {
        return nodes.get(index).client();
    }

    public int size() {
        return nodes.size();
    }

    public List<TestNode> nodes() {
        return nodes;
    }

    @Override
    public void close() {
        nodes.forEach(TestNode::stop);
    }
}
