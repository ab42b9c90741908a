package io.ringkv.health;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.http.HttpStatus;
import org.springframework.test.web.reactive.server.WebTestClient;

import io.ringkv.support.BlockHoundInstaller;
import io.ringkv.support.HungPeer;
import io.ringkv.support.TestCluster;
import io.ringkv.support.TestNode;

/**
 * The three kinds of sick peer: gone (connections refused), hung (accepts, never answers) and
 * slow. Each is detected by its circuit breaker, skipped at once while the breaker is open,
 * reported in /actuator/health, and, where it heals, taken back without help.
 */
class SickPeerTest {

    private static final Map<String, Object> FAST_BREAKERS = Map.of(
            "ringkv.replication.timeout", "500ms",
            "ringkv.health.breaker.minimum-calls", "3",
            "ringkv.health.breaker.window-size", "5",
            "ringkv.health.breaker.open-for", "1s",
            "ringkv.health.breaker.probe-calls", "2");

    @TempDir
    Path dataRoot;

    private static long millisOf(Runnable request) {
        long started = System.nanoTime();
        request.run();
        return (System.nanoTime() - started) / 1_000_000;
    }

    private static void put(WebTestClient client, String key, String replicas, HttpStatus expected) {
        client.put().uri("/v0/entity?id=" + key + "&replicas=" + replicas).bodyValue("v".getBytes())
                .exchange().expectStatus().isEqualTo(expected);
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> memberHealth(TestNode node, String member) {
        Map<String, Object> health = node.client().get().uri("/actuator/health").exchange()
                .expectBody(Map.class).returnResult().getResponseBody();
        var ring = (Map<String, Object>) ((Map<String, Object>) health.get("components")).get("ring");
        var members = (Map<String, Object>) ((Map<String, Object>) ring.get("details")).get("members");
        return (Map<String, Object>) members.get(member);
    }

    private static String readiness(TestNode node) {
        return (String) node.client().get().uri("/actuator/health/readiness").exchange()
                .expectBody(Map.class).returnResult().getResponseBody().get("status");
    }

    /** Two nodes that do not share the secret: each is DOWN for the other, with the reason, and counted. */
    @Test
    void aPeerWithAnotherSecretIsReportedDownWithTheReason() {
        int mark = BlockHoundInstaller.violations().size();
        List<Integer> ports = TestNode.freePorts(2);
        Map<String, Object> otherSecret = new HashMap<>(FAST_BREAKERS);
        otherSecret.put("ringkv.cluster.secret", "not-the-cluster-secret");
        try (TestNode a = TestNode.create(ports.get(0), dataRoot.resolve("a"), ports, FAST_BREAKERS).start();
             TestNode b = TestNode.create(ports.get(1), dataRoot.resolve("b"), ports, otherSecret).start()) {
            Awaitility.await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).untilAsserted(() -> {
                put(a.client(), "one-copy", "1/2", HttpStatus.CREATED);
                assertThat(memberHealth(a, b.url())).containsEntry("state", "DOWN")
                        .hasEntrySatisfying("lastFailure", reason -> assertThat((String) reason).contains("secret"));
            });
            String metrics = a.client().get().uri("/actuator/prometheus").exchange()
                    .expectStatus().isOk().expectBody(String.class).returnResult().getResponseBody();
            assertThat(metrics).containsPattern("ringkv_replica_refused_total\\{[^}]*peer=\"" + b.url() + "\"[^}]*} [1-9]");
        }
        assertThat(BlockHoundInstaller.violationsSince(mark)).isEmpty();
    }

    @Test
    void aPeerThatRefusesConnectionsIsSkippedReportedAndTakenBackWhenItReturns() {
        int mark = BlockHoundInstaller.violations().size();
        try (TestCluster cluster = TestCluster.start(3, dataRoot, FAST_BREAKERS)) {
            TestNode coordinator = cluster.node(0);
            String gone = cluster.node(2).url();
            put(coordinator.client(), "warm", "3/3", HttpStatus.CREATED);
            assertThat(memberHealth(coordinator, gone)).containsEntry("state", "UP");

            cluster.node(2).stop();
            for (int i = 0; i < 5; i++) {
                put(coordinator.client(), "k" + i, "3/3", HttpStatus.GATEWAY_TIMEOUT);
            }
            assertThat(memberHealth(coordinator, gone)).containsEntry("state", "DOWN").containsEntry("breaker", "OPEN");
            assertThat(readiness(coordinator)).as("a sick peer does not make this node unready").isEqualTo("UP");
            put(coordinator.client(), "still-served", "2/3", HttpStatus.CREATED);

            cluster.node(2).start();
            Awaitility.await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).untilAsserted(() -> {
                coordinator.client().put().uri("/v0/entity?id=back&replicas=3/3").bodyValue("v".getBytes()).exchange()
                        .expectStatus().isCreated();
                assertThat(memberHealth(coordinator, gone)).containsEntry("state", "UP").containsEntry("breaker", "CLOSED");
            });
        }
        assertThat(BlockHoundInstaller.violationsSince(mark)).isEmpty();
    }

    @Test
    void aHungPeerCostsTheTimeoutOnlyUntilItsBreakerOpens() throws Exception {
        int mark = BlockHoundInstaller.violations().size();
        try (HungPeer hung = new HungPeer()) {
            List<Integer> ports = TestNode.freePorts(2);
            List<Integer> members = List.of(ports.get(0), ports.get(1), hung.port());
            try (TestNode a = TestNode.create(ports.get(0), dataRoot.resolve("a"), members, FAST_BREAKERS).start();
                 TestNode b = TestNode.create(ports.get(1), dataRoot.resolve("b"), members, FAST_BREAKERS).start()) {
                TestNode.awaitEachSeesEveryOtherHoldData(List.of(a, b));
                String hungName = "http://127.0.0.1:" + hung.port();

                // Two healthy replicas answer 2/3 without waiting for the third.
                long quorum = millisOf(() -> put(a.client(), "q", "2/3", HttpStatus.CREATED));
                assertThat(quorum).isLessThan(450);

                long firstTimeout = millisOf(() -> put(a.client(), "t0", "3/3", HttpStatus.GATEWAY_TIMEOUT));
                assertThat(firstTimeout).as("waits for the timeout while the breaker is closed").isGreaterThanOrEqualTo(450);
                for (int i = 1; i < 4; i++) {
                    put(a.client(), "t" + i, "3/3", HttpStatus.GATEWAY_TIMEOUT);
                }
                assertThat(memberHealth(a, hungName)).containsEntry("state", "DOWN");
                long rejected = millisOf(() -> put(a.client(), "fast", "3/3", HttpStatus.GATEWAY_TIMEOUT));
                assertThat(rejected).as("an open breaker fails the request at once").isLessThan(300);
                assertThat(hung.connectionsAccepted()).isPositive();

                String metrics = a.client().get().uri("/actuator/prometheus").exchange()
                        .expectStatus().isOk().expectBody(String.class).returnResult().getResponseBody();
                assertThat(metrics).contains("ringkv_replica_calls_seconds_count{").contains("outcome=\"rejected\"")
                        .contains("ringkv_replica_breaker_state{").contains("ringkv_client_not_enough_replicas_total{");
            }
        }
        assertThat(BlockHoundInstaller.violationsSince(mark)).isEmpty();
    }

    @Test
    void aSlowPeerOpensItsBreakerBySlowCallsWhileQuorumsStayFast() {
        int mark = BlockHoundInstaller.violations().size();
        List<Integer> ports = TestNode.freePorts(3);
        Map<String, Object> settings = new java.util.HashMap<>(FAST_BREAKERS);
        settings.put("ringkv.replication.timeout", "2s");
        settings.put("ringkv.health.breaker.slow-call-threshold", "150ms");
        settings.put("ringkv.health.breaker.slow-call-rate", "50");
        Map<String, Object> slowSettings = new java.util.HashMap<>(settings);
        slowSettings.put("ringkv.testing.replica-delay", "300ms");
        try (TestNode a = TestNode.create(ports.get(0), dataRoot.resolve("a"), ports, settings).start();
             TestNode b = TestNode.create(ports.get(1), dataRoot.resolve("b"), ports, settings).start();
             TestNode slow = TestNode.create(ports.get(2), dataRoot.resolve("slow"), ports, slowSettings).start()) {
            TestNode.awaitEachSeesEveryOtherHoldData(List.of(a, b, slow));
            for (int i = 0; i < 3; i++) {
                long slowWrite = millisOf(() -> put(a.client(), "s", "3/3", HttpStatus.CREATED));
                assertThat(slowWrite).as("3/3 waits for the slow replica").isGreaterThanOrEqualTo(290);
            }
            assertThat(memberHealth(a, slow.url())).containsEntry("state", "DOWN").containsEntry("breaker", "OPEN");
            long rejected = millisOf(() -> put(a.client(), "s", "3/3", HttpStatus.GATEWAY_TIMEOUT));
            assertThat(rejected).isLessThan(250);
            long quorum = millisOf(() -> put(a.client(), "q", "2/3", HttpStatus.CREATED));
            assertThat(quorum).isLessThan(250);
        }
        assertThat(BlockHoundInstaller.violationsSince(mark)).isEmpty();
    }
}
