package io.ringkv.support;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.springframework.test.web.reactive.server.WebTestClient;


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
            TestNode.awaitEachSeesEveryOtherHoldData(nodes);
        } catch (RuntimeException e) {
            cluster.close();
            throw e;
        }
        return cluster;
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
