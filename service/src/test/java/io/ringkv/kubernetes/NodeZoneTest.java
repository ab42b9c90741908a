package io.ringkv.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.Test;

import io.ringkv.kubernetes.KubernetesApi.Answer;
import io.ringkv.settings.InvalidSettingException;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.server.HttpServer;

/** A Node's zone label as the API server answers it: present, absent, not a zone, or refused. */
class NodeZoneTest {

    private static final String GET = "GET /api/v1/nodes/worker-1";

    private static Answer node(String labels) {
        return new Answer(200, "{\"kind\":\"Node\",\"metadata\":{\"name\":\"worker-1\",\"labels\":{" + labels + "}}}");
    }

    @Test
    void theZoneIsTheNodesZoneLabel() {
        assertThat(NodeZone.zone(GET, node("\"kubernetes.io/hostname\":\"worker-1\",\"topology.kubernetes.io/zone\":\"eu-west-1a\"")))
                .hasValue("eu-west-1a");
    }

    @Test
    void aNodeWithoutTheLabelHasNoZone() {
        assertThat(NodeZone.zone(GET, node("\"kubernetes.io/hostname\":\"worker-1\",\"topology.kubernetes.io/region\":\"eu-west-1\"")))
                .isEmpty();
        assertThat(NodeZone.zone(GET, node("\"topology.kubernetes.io/zone\":\"\""))).as("an empty label").isEmpty();
        assertThat(NodeZone.zone(GET, new Answer(200, "{\"kind\":\"Node\",\"metadata\":{\"name\":\"worker-1\"}}")))
                .as("no labels at all").isEmpty();
    }

    @Test
    void aLabelThatIsNoZoneIsRefusedAsTheSettingWouldBe() {
        assertThatThrownBy(() -> NodeZone.zone(GET, node("\"topology.kubernetes.io/zone\":\"eu west/1a\"")))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("'eu west/1a'").hasMessageContaining("is not a Kubernetes label value");
        assertThatThrownBy(() -> NodeZone.zone(GET, node("\"topology.kubernetes.io/zone\":\"" + "a".repeat(64) + "\"")))
                .isInstanceOf(IllegalStateException.class);
    }

    @Test
    void anErrorStatusIsAnErrorWithTheApiServersReasonNotANodeWithoutZone() {
        Answer forbidden = new Answer(403, "{\"kind\":\"Status\",\"status\":\"Failure\",\"message\":\"nodes \\\"worker-1\\\" is"
                + " forbidden: User \\\"system:serviceaccount:shop:ringkv\\\" cannot get resource \\\"nodes\\\"\",\"code\":403}");
        assertThatThrownBy(() -> NodeZone.zone(GET, forbidden)).isInstanceOf(IllegalStateException.class)
                .hasMessageStartingWith(GET + " answered 403 (nodes \"worker-1\" is forbidden: User");
        assertThatThrownBy(() -> NodeZone.zone(GET, new Answer(503, "upstream connect error")))
                .isInstanceOf(IllegalStateException.class).hasMessage(GET + " answered 503");
    }

    @Test
    void theNodeIsAskedForByNameWithThePodsToken() {
        List<String> asked = new CopyOnWriteArrayList<>();
        DisposableServer api = HttpServer.create().host("127.0.0.1").port(0)
                .route(routes -> routes.get("/api/v1/nodes/{name}", (request, response) -> {
                    asked.add(request.uri() + " " + request.requestHeaders().get("Authorization"));
                    return response.sendString(Mono.just("{\"metadata\":{\"labels\":{\"topology.kubernetes.io/zone\":\"zone-b\"}}}"));
                }))
                .bindNow();
        try {
            var zone = new NodeZone(new KubernetesApi(HttpClient.create(), URI.create("http://127.0.0.1:" + api.port()), "shop",
                    () -> "pod-token"), "worker-1").zone().block(Duration.ofSeconds(5));
            assertThat(zone).hasValue("zone-b");
            assertThat(asked).containsExactly("/api/v1/nodes/worker-1 Bearer pod-token");
        } finally {
            api.disposeNow();
        }
    }

    @Test
    void outsideAPodTheNodeRefusesToStartNamingTheSettingAndTheRight() {
        assertThatThrownBy(() -> NodeZone.atStart("ringkv.cluster.zone-from-node", "worker-1"))
                .isInstanceOf(InvalidSettingException.class)
                .hasMessageStartingWith("Invalid setting ringkv.cluster.zone-from-node: cannot take this node's zone from the"
                        + " label topology.kubernetes.io/zone of Node worker-1: no Kubernetes API here")
                .hasMessageContaining("needs get on nodes");
    }
}
