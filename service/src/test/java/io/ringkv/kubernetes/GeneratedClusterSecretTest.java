package io.ringkv.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.netty.handler.codec.http.HttpResponseStatus;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerResponse;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Against a stand-in for the API server on loopback that stores Secrets as the real one does: a
 * create of a name that exists answers 409. What the nodes of a new StatefulSet, starting together,
 * end up sharing, and what a pod without the rights to it is told.
 */
class GeneratedClusterSecretTest {

    private static final String SECRETS = "/api/v1/namespaces/shop/secrets";
    private static final JsonMapper JSON = JsonMapper.builder().build();

    /** The stored Secrets, as the JSON the API server returns. */
    private final Map<String, String> stored = new ConcurrentHashMap<>();
    private final List<String> calls = new CopyOnWriteArrayList<>();
    private final AtomicInteger unavailableAnswers = new AtomicInteger();
    /** Every GET first answers 404, as for a Secret created just after it was read. */
    private volatile boolean readsMissEverything;
    private volatile HttpResponseStatus refusal;
    private DisposableServer api;

    @BeforeEach
    void startApiServer() {
        api = HttpServer.create().host("127.0.0.1").port(0)
                .route(routes -> routes
                        .get(SECRETS + "/{name}", (request, response) -> {
                            String name = request.param("name");
                            calls.add("GET " + name + " " + request.requestHeaders().get("Authorization"));
                            if (refused(response)) {
                                return response.sendString(Mono.just("{\"kind\":\"Status\",\"reason\":\"Forbidden\"}"));
                            }
                            String secret = stored.get(name);
                            if (secret == null || readsMissEverything) {
                                readsMissEverything = false;
                                return response.status(HttpResponseStatus.NOT_FOUND).sendString(Mono.just("{\"kind\":\"Status\"}"));
                            }
                            return response.sendString(Mono.just(secret));
                        })
                        .post(SECRETS, (request, response) -> request.receive().aggregate().asString().flatMap(body -> {
                            JsonNode secret = JSON.readTree(body);
                            String name = secret.path("metadata").path("name").asString();
                            calls.add("POST " + name + " " + request.requestHeaders().get("Content-Type"));
                            if (refused(response)) {
                                return response.sendString(Mono.just("{\"kind\":\"Status\"}")).then();
                            }
                            boolean created = stored.putIfAbsent(name, body) == null;
                            return response.status(created ? HttpResponseStatus.CREATED : HttpResponseStatus.CONFLICT)
                                    .sendString(Mono.just(created ? body : "{\"kind\":\"Status\",\"reason\":\"AlreadyExists\"}")).then();
                        })))
                .bindNow();
    }

    private boolean refused(HttpServerResponse response) {
        if (unavailableAnswers.getAndUpdate(left -> Math.max(0, left - 1)) > 0) {
            response.status(HttpResponseStatus.SERVICE_UNAVAILABLE);
            return true;
        }
        if (refusal != null) {
            response.status(refusal);
            return true;
        }
        return false;
    }

    @AfterEach
    void stopApiServer() {
        api.disposeNow();
    }

    private GeneratedClusterSecret node(String token) {
        return new GeneratedClusterSecret(new KubernetesApi(HttpClient.create(), URI.create("http://127.0.0.1:" + api.port()), "shop",
                () -> token), "ringkv");
    }

    @Test
    void theFirstNodeCreatesARandomSecretAndTheOthersReadIt() {
        String first = node("t0").getOrCreate().block(Duration.ofSeconds(10));
        assertThat(first).hasSize(48).matches("[0-9a-f]+");
        JsonNode created = JSON.readTree(stored.get("ringkv"));
        assertThat(created.path("metadata").path("labels").path("app.kubernetes.io/managed-by").asString()).isEqualTo("ringkv");
        assertThat(created.path("type").asString()).isEqualTo("Opaque");

        assertThat(node("t1").getOrCreate().block(Duration.ofSeconds(10))).isEqualTo(first);
        assertThat(calls).containsExactly("GET ringkv Bearer t0", "POST ringkv application/json", "GET ringkv Bearer t1");
    }

    @Test
    void nodesStartingTogetherAllEndWithTheOneSecretThatWasStored() {
        List<String> secrets = Flux.range(0, 8)
                .flatMap(i -> node("t" + i).getOrCreate(), 8)
                .collectList()
                .block(Duration.ofSeconds(20));
        String storedSecret = new String(java.util.Base64.getDecoder().decode(
                JSON.readTree(stored.get("ringkv")).path("data").path(GeneratedClusterSecret.KEY).asString()));
        assertThat(secrets).hasSize(8).containsOnly(storedSecret);
    }

    @Test
    void aCreateThatLosesTheRaceReadsTheWinnersSecret() {
        String winner = node("a").getOrCreate().block(Duration.ofSeconds(10));
        readsMissEverything = true;
        calls.clear();
        assertThat(node("b").getOrCreate().block(Duration.ofSeconds(10))).isEqualTo(winner);
        assertThat(calls).containsExactly("GET ringkv Bearer b", "POST ringkv application/json", "GET ringkv Bearer b");
    }

    @Test
    void anOperatorsSecretIsReadAsItIs() {
        stored.put("ringkv", "{\"kind\":\"Secret\",\"data\":{\"cluster-secret\":\"b3BlcmF0b3Itc2VjcmV0LTEyMzQ=\"}}");
        assertThat(node("t").getOrCreate().block(Duration.ofSeconds(10))).isEqualTo("operator-secret-1234");
    }

    @Test
    void anApiServerThatIsStartingIsAskedAgain() {
        unavailableAnswers.set(3);
        assertThat(node("t").getOrCreate().block(Duration.ofSeconds(30))).hasSize(48);
        assertThat(calls).hasSize(5);
    }

    @Test
    void aPodWithoutTheRightsIsToldWhichOnesAtOnce() {
        refusal = HttpResponseStatus.FORBIDDEN;
        assertThatThrownBy(() -> node("t").getOrCreate().block(Duration.ofSeconds(10)))
                .hasMessageContaining("403")
                .hasMessageContaining("get and create on Secrets");
        assertThat(calls).as("a refusal is not retried").hasSize(1);
    }

    @Test
    void aSecretWithoutTheKeyIsAnErrorNotANewSecret() {
        stored.put("ringkv", "{\"kind\":\"Secret\",\"data\":{\"password\":\"eA==\"}}");
        assertThatThrownBy(() -> node("t").getOrCreate().block(Duration.ofSeconds(10)))
                .hasMessageContaining("has no key cluster-secret");
        assertThat(calls).hasSize(1);
    }
}
