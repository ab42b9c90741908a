package io.ringkv.peer.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.time.Duration;
import java.util.function.Consumer;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServerRoutes;
import reactor.netty.http.server.HttpServer;
import reactor.netty.resources.LoopResources;

/** What a node learns of another from its public port: from this version's route, and from an older node's. */
class NodeInfoClientTest {

    private static final String INFO = "{\"self\":\"http://node-a:8080\",\"clusterPort\":7070}";

    private final LoopResources loops = LoopResources.create("node-info-test", 1, true);
    private final NodeInfoClient client = new NodeInfoClient(loops, Duration.ofSeconds(2), Duration.ofSeconds(1),
            ClientSecurity.PLAINTEXT);
    private DisposableServer server;

    @AfterEach
    void stop() {
        server.disposeNow();
        loops.disposeLater(Duration.ZERO, Duration.ofSeconds(5)).block(Duration.ofSeconds(6));
    }

    @Test
    void readsTheNodeFromItsSelfRoute() {
        serve(routes -> routes.get(NodeInfoClient.PATH, (request, response) -> response.sendString(Mono.just(INFO)))
                .get("/v0/cluster", (request, response) -> response.status(401).send()));
        assertThat(client.of(baseUrl()).block()).isEqualTo(new NodeInfoClient.NodeInfo("http://node-a:8080", 7070));
    }

    /** During a rolling upgrade an older node has no /v0/cluster/self, only its full view. */
    @Test
    void asksAnOlderNodeForItsFullView() {
        serve(routes -> routes.get("/v0/cluster", (request, response) -> response.sendString(Mono.just(INFO))));
        assertThat(client.of(baseUrl()).block()).isEqualTo(new NodeInfoClient.NodeInfo("http://node-a:8080", 7070));
    }

    @Test
    void failsOnAnyOtherAnswer() {
        serve(routes -> routes.get(NodeInfoClient.PATH, (request, response) -> response.status(503).send()));
        assertThatThrownBy(() -> client.of(baseUrl()).block()).hasMessageContaining("answered 503");
    }

    private void serve(Consumer<HttpServerRoutes> routes) {
        server = HttpServer.create().host("127.0.0.1").port(0).route(routes).bindNow();
    }

    private URI baseUrl() {
        return URI.create("http://127.0.0.1:" + server.port());
    }
}
