package io.ringkv.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;

import io.ringkv.support.TestNode;

/** Health, probes and metrics on a separate management port, as the Helm chart uses them. */
class ActuatorTest {

    private static final Duration IDLE_TIMEOUT = Duration.ofSeconds(1);

    @TempDir
    Path dataDir;

    @Test
    void servesProbesHealthDetailsAndMetricsOnTheManagementPort() throws IOException {
        List<Integer> ports = TestNode.freePorts(3);
        int apiPort = ports.get(0);
        int managementPort = ports.get(1);
        int absentPeer = ports.get(2);
        try (TestNode node = TestNode.create(apiPort, dataDir, List.of(apiPort, absentPeer),
                Map.of("management.server.port", managementPort, "server.netty.idle-timeout", IDLE_TIMEOUT.toString())).start()) {
            WebTestClient management = WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + managementPort).build();
            node.client().put().uri("/v0/entity?id=k&replicas=1/2").bodyValue("v".getBytes()).exchange().expectStatus().isCreated();
            node.client().get().uri("/v0/entity?id=k&replicas=2/2").exchange().expectStatus().isEqualTo(504);

            // The probes answer the status alone to a caller without a token (with security off, every
            // caller): the members, their states and the data directory are /actuator/health's.
            management.get().uri("/actuator/health/liveness").exchange().expectStatus().isOk()
                    .expectBody().jsonPath("$.status").isEqualTo("UP").jsonPath("$.components").doesNotExist();
            // The other member is unreachable: this node is still ready.
            management.get().uri("/actuator/health/readiness").exchange().expectStatus().isOk()
                    .expectBody().jsonPath("$.status").isEqualTo("UP").jsonPath("$.components").doesNotExist();
            management.get().uri("/actuator/health").exchange().expectStatus().isOk()
                    .expectBody()
                    .jsonPath("$.components.storage.status").isEqualTo("UP")
                    .jsonPath("$.components.storage.details.rocksdb").isEqualTo("open")
                    .jsonPath("$.components.storage.details.writable").isEqualTo(true)
                    .jsonPath("$.components.ring.status").isEqualTo("UP")
                    .jsonPath("$.components.ring.details.size").isEqualTo(2)
                    .jsonPath("$.components.ring.details.members['http://127.0.0.1:" + absentPeer + "'].state").isEqualTo("SUSPECT")
                    .jsonPath("$.components.ring.details.members['http://127.0.0.1:" + absentPeer + "'].lastSuccess").isEqualTo("never");

            String metrics = management.get().uri("/actuator/prometheus").exchange().expectStatus().isOk()
                    .expectBody(String.class).returnResult().getResponseBody();
            assertThat(metrics)
                    .contains("ringkv_client_requests_seconds_bucket{")
                    .contains("operation=\"put\"", "status=\"201\"")
                    .contains("ringkv_client_not_enough_replicas_total{")
                    .contains("ringkv_client_requests_inflight")
                    .contains("ringkv_replica_requests_inflight")
                    .contains("ringkv_replica_calls_seconds_count{")
                    .contains("ringkv_replica_breaker_state{")
                    .contains("ringkv_storage_keys_estimated")
                    .contains("ringkv_storage_sst_live_bytes")
                    .contains("ringkv_storage_block_cache_hit_ratio")
                    .contains("ringkv_storage_compaction_pending_bytes");
            // The write at 1/2 missed the absent member: its coordinator keeps it as a hint.
            String absent = "http://127.0.0.1:" + absentPeer;
            assertThat(metrics).contains("ringkv_hints_stored_total", "ringkv_hints_pending ", "ringkv_repair_keys_total{");
            management.get().uri("/actuator/repair").exchange().expectStatus().isOk()
                    .expectBody()
                    .jsonPath("$.hintsPending['" + absent + "']").isEqualTo(1)
                    .jsonPath("$.repair.interval").isEqualTo("PT5M");
            management.post().uri("/actuator/repair").contentType(MediaType.APPLICATION_JSON)
                    .bodyValue(Map.of("peer", "http://127.0.0.1:1")).exchange().expectStatus().isBadRequest();
            management.post().uri("/actuator/repair").contentType(MediaType.APPLICATION_JSON)
                    .bodyValue(Map.of("peer", absent)).exchange().expectStatus().isOk()
                    .expectBody().jsonPath("$.peers[0]").isEqualTo(absent);
            management.get().uri("/actuator/repair").exchange().expectStatus().isOk()
                    .expectBody().jsonPath("$.repair.needFullRepair[0]").isEqualTo(absent);
            // The public port does not serve Actuator when it has a port of its own.
            node.client().get().uri("/actuator/health").exchange().expectStatus().isNotFound();

            idleConnectionsAreClosedOnBothPorts(apiPort, managementPort);
        }
    }

    /**
     * A connection that sends nothing is closed after the idle timeout, on the management port
     * (a server of its own) as on the public one; a request in progress is not idle, even when
     * its body comes later than that.
     */
    private static void idleConnectionsAreClosedOnBothPorts(int apiPort, int managementPort) throws IOException {
        for (int port : List.of(apiPort, managementPort)) {
            try (Socket idle = new Socket("127.0.0.1", port)) {
                idle.setSoTimeout((int) IDLE_TIMEOUT.multipliedBy(5).toMillis());
                try {
                    assertThat(idle.getInputStream().read()).as("port %d, an idle connection", port).isEqualTo(-1);
                } catch (SocketTimeoutException e) {
                    throw new AssertionError("port " + port + ": an idle connection still open after " + idle.getSoTimeout() + " ms", e);
                } catch (SocketException e) {
                    // Reset: closed as well.
                }
            }
        }
        try (Socket slow = new Socket("127.0.0.1", apiPort)) {
            slow.setSoTimeout(10_000);
            OutputStream out = slow.getOutputStream();
            out.write("PUT /v0/entity?id=slow&replicas=1/2 HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nsl"
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            LockSupport.parkNanos(IDLE_TIMEOUT.multipliedBy(2).toNanos());
            out.write("ow".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            String answer = new String(slow.getInputStream().readNBytes(12), StandardCharsets.US_ASCII);
            assertThat(answer).as("a request whose body came after the idle timeout").isEqualTo("HTTP/1.1 201");
        }
    }
}
