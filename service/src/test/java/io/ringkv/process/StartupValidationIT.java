package io.ringkv.process;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import io.ringkv.support.NodeProcess;
import io.ringkv.support.TestNode;

/** A bad or unknown setting stops the node with a line that names it, and no stack trace. */
class StartupValidationIT {

    @TempDir
    Path dir;

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "self not among peers | ringkv.cluster.self | --ringkv.cluster.self=http://127.0.0.1:9 | --ringkv.cluster.peers=http://127.0.0.1:1,http://127.0.0.1:2",
            "malformed self       | ringkv.cluster.self | --ringkv.cluster.self=127.0.0.1:8080     | --ringkv.cluster.peers=",
            "peer with a path     | ringkv.cluster.peers | --ringkv.cluster.self=http://127.0.0.1:1 | --ringkv.cluster.peers=http://127.0.0.1:1,http://127.0.0.1:2/x",
            "unwritable data dir  | ringkv.data-dir     | --ringkv.data-dir=DIR/a-file/data         | --ringkv.cluster.peers=",
            "bad timeout          | ringkv.replication.timeout | --ringkv.replication.timeout=soon  | --ringkv.cluster.peers=",
            "peers but no secret  | ringkv.cluster.secret | --ringkv.cluster.self=http://127.0.0.1:1 | --ringkv.cluster.peers=http://127.0.0.1:1,http://127.0.0.1:2",
            "cluster port too big | ringkv.cluster.port | --ringkv.cluster.port=70000             | --ringkv.cluster.peers=",
            "unknown setting      | Unknown setting ringkv.cluster.ports (did you mean ringkv.cluster.port?) | --ringkv.cluster.ports=7070 | --ringkv.cluster.peers=",
    })
    void stopsWithOneLineNamingTheSetting(String scenario, String setting, String first, String second) throws Exception {
        Files.writeString(dir.resolve("a-file"), "not a directory");
        int port = TestNode.freePorts(1).get(0);
        String dataDir = first.startsWith("--ringkv.data-dir=") ? first : "--ringkv.data-dir=" + dir.resolve("data");
        NodeProcess node = NodeProcess.of("256m", port, dir.resolve("node.log"),
                dataDir.replace("DIR", dir.toString()), first.replace("DIR", dir.toString()), second);
        try (node) {
            node.start();
            int exit = node.awaitExit(Duration.ofSeconds(90));
            String output = node.output();
            assertThat(exit).as(output).isNotZero();
            assertThat(output).as(output).contains(setting);
            assertThat(output).as("no stack trace").doesNotContainPattern("\\n\\s+at [a-z]+\\.");
        }
    }
}
