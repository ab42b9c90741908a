package io.ringkv.discovery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.ringkv.settings.InvalidSettingException;
import io.ringkv.settings.InvalidSettingFailureAnalyzer;
import io.ringkv.support.TestNode;

/**
 * A node told to take its zone from its Node's label, which it cannot read (here: no Kubernetes
 * API at all), does not start without a zone: it stops with the setting named.
 */
class ZoneFromNodeStartTest {

    @TempDir
    Path dir;

    @Test
    void aNodeThatCannotReadItsNodeDoesNotStart() {
        int port = TestNode.freePorts(1).get(0);
        TestNode node = TestNode.create(port, dir.resolve("node"), List.of(port), Map.of("ringkv.cluster.zone-from-node", "worker-1"));
        Throwable failure = catchThrowable(node::startJoining);
        try {
            var analysis = new InvalidSettingFailureAnalyzer().analyze(failure);
            assertThat(analysis).as("a bad setting, reported: %s", failure).isNotNull();
            assertThat(analysis.getDescription()).startsWith("Invalid setting ringkv.cluster.zone-from-node: cannot take this"
                    + " node's zone from the label topology.kubernetes.io/zone of Node worker-1");
            assertThat(failure).hasRootCauseInstanceOf(InvalidSettingException.class);
        } finally {
            if (node.isRunning()) {
                node.stop();
            }
        }
    }
}
