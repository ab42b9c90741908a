package io.ringkv.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;

import io.ringkv.support.TestNode;

/** Health, probes and metrics on a separate management port, as the Helm chart uses them. */
class ActuatorTest {

    @TempDir
    Path dataDir;

    @Test
    void servesProbesHealthDetailsAndMetricsOnTheManagementPort() {
        List<Integer> ports = TestNode.freePorts(3);
        int apiPort = ports.get(0);
        int managementPort = ports.get(1);
        int absentPeer = ports.get(2);
        try (TestNode node = TestNode.create(apiPort, dataDir, List.of(apiPort, absentPeer),
                Map.of("management.server.port", managementPort)).start()) {
            WebTestClient management = WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + managementPort).build();
            node.client().put().uri("/v0/entity?id=k&replicas=1/2").bodyValue("v".getBytes()).exchange().expectStatus().isCreated();
            node.client().get().uri("/v0/entity?id=k&replicas=2/2").exchange().expectStatus().isEqualTo(504);

            management.get().uri("/actuator/health/liveness").exchange().expectStatus().isOk()
                    .expectBody().jsonPath("$.status").isEqualTo("UP");
            // The other member is unreachable: this node is still ready.
            management.get().uri("/actuator/health/readiness").exchange().expectStatus().isOk()
                    .expectBody().jsonPath("$.status").isEqualTo("UP");
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
        }
    }
}
