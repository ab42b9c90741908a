package io.ringkv.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.ringkv.support.RawHttp;
import io.ringkv.support.TestNode;

/**
 * {@code /v0/status} means ready, and a node told to stop drains its clients: unready at once,
 * it keeps serving for the drain delay and closes each connection after its answer.
 */
class StatusAndDrainTest {

    @TempDir
    Path dataDir;

    @Test
    void aStoppingNodeIsUnreadyButServesEveryRequestAndClosesEachConnectionAfterItsAnswer() throws Exception {
        int port = TestNode.freePorts(1).get(0);
        TestNode node = TestNode.create(port, dataDir, List.of(port), Map.of("ringkv.shutdown.drain-delay", "3s")).start();
        try {
            assertThat(RawHttp.exchange(port, "GET", bytes("/v0/status"), new byte[0])).startsWith("HTTP/1.1 200");

            CompletableFuture<Void> stopping = CompletableFuture.runAsync(node::stop);
            Awaitility.await().atMost(Duration.ofSeconds(2)).pollInterval(Duration.ofMillis(20))
                    .until(() -> RawHttp.exchange(port, "GET", bytes("/v0/status"), new byte[0]).startsWith("HTTP/1.1 503"));
            String status = RawHttp.exchange(port, "GET", bytes("/v0/status"), new byte[0]);
            assertThat(status).as("unready, and why").containsIgnoringCase("retry-after: 1").contains("readinessState");

            // Keep-alive requests: RawHttp.send reads until the server closes, which it must do after its answer.
            String put = RawHttp.send(port, keepAlive("PUT", "/v0/entity?id=during-drain", "v"));
            assertThat(put).as("still served while draining, then closed").startsWith("HTTP/1.1 201")
                    .containsIgnoringCase("connection: close");
            String get = RawHttp.send(port, keepAlive("GET", "/v0/entity?id=during-drain", ""));
            assertThat(get).startsWith("HTTP/1.1 200").containsIgnoringCase("connection: close").endsWith("v");
            assertThat(stopping).as("the drain lasts its delay").isNotDone();
            stopping.get();
        } finally {
            node.stop();
        }
    }

    /** A request that asks to keep the connection open (HTTP/1.1's default). */
    private static byte[] keepAlive(String method, String target, String body) {
        return bytes(method + " " + target + " HTTP/1.1\r\nHost: localhost\r\nContent-Length: " + body.length() + "\r\n\r\n" + body);
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
