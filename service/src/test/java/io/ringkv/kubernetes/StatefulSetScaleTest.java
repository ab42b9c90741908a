package io.ringkv.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.netty.handler.codec.http.HttpResponseStatus;
import reactor.netty.DisposableServer;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.server.HttpServer;

/** Against a stand-in for the API server on loopback: the request a pod sends, and how it reads the answer. */
class StatefulSetScaleTest {

    private static final String PATH = "/apis/apps/v1/namespaces/shop/statefulsets/ringkv";

    private final AtomicInteger replicas = new AtomicInteger(3);
    private final List<String> authorizations = new CopyOnWriteArrayList<>();
    private volatile HttpResponseStatus status = HttpResponseStatus.OK;
    private DisposableServer api;

    @BeforeEach
    void startApiServer() {
        api = HttpServer.create().host("127.0.0.1").port(0)
                .route(routes -> routes.get(PATH, (request, response) -> {
                    authorizations.add(request.requestHeaders().get("Authorization"));
                    return response.status(status)
                            .sendString(reactor.core.publisher.Mono.just(
                                    "{\"kind\":\"StatefulSet\",\"spec\":{\"replicas\":" + replicas.get() + ",\"serviceName\":\"x\"}}"));
                }))
                .bindNow();
    }

    @AfterEach
    void stopApiServer() {
        api.disposeNow();
    }

    private StatefulSetScale pod(int ordinal) {
        return new StatefulSetScale(new KubernetesApi(HttpClient.create(), URI.create("http://127.0.0.1:" + api.port()), "shop",
                () -> "token-" + authorizations.size()), "ringkv", ordinal);
    }

    @Test
    void aPodAtOrAboveTheReplicasIsScaledAwayOthersRestart() {
        assertThat(pod(2).scaledAway().block(Duration.ofSeconds(5))).isFalse();
        replicas.set(2);
        assertThat(pod(2).scaledAway().block(Duration.ofSeconds(5))).isTrue();
        assertThat(pod(1).scaledAway().block(Duration.ofSeconds(5))).isFalse();
        replicas.set(0);
        assertThat(pod(0).scaledAway().block(Duration.ofSeconds(5))).as("scaled to zero: every pod leaves").isTrue();
    }

    @Test
    void theTokenIsReadForEachCallAndSentAsBearer() {
        pod(0).scaledAway().block(Duration.ofSeconds(5));
        pod(0).scaledAway().block(Duration.ofSeconds(5));
        assertThat(authorizations).containsExactly("Bearer token-0", "Bearer token-1");
    }

    @Test
    void aRefusalIsAnErrorNotADecision() {
        status = HttpResponseStatus.FORBIDDEN;
        assertThatThrownBy(() -> pod(5).scaledAway().block(Duration.ofSeconds(5)))
                .hasMessageContaining("403");
    }

    @Test
    void ordinalsComeOnlyFromThePodsOfTheStatefulSet() {
        assertThat(StatefulSetScale.ordinal("ringkv-0", "ringkv")).hasValue(0);
        assertThat(StatefulSetScale.ordinal("ringkv-12", "ringkv")).hasValue(12);
        assertThat(StatefulSetScale.ordinal("my-ringkv-3", "my-ringkv")).hasValue(3);
        assertThat(StatefulSetScale.ordinal("ringkv-", "ringkv")).isEmpty();
        assertThat(StatefulSetScale.ordinal("ringkv-x", "ringkv")).isEmpty();
        assertThat(StatefulSetScale.ordinal("other-1", "ringkv")).isEmpty();
        assertThat(StatefulSetScale.ordinal("ringkv-99999999999", "ringkv")).isEmpty();
    }

    @Test
    void aPodsOrdinalWithoutItsStatefulSetsNameIsAfterItsLastDash() {
        assertThat(StatefulSetScale.ordinal("ringkv-0")).hasValue(0);
        assertThat(StatefulSetScale.ordinal("db-1-12")).as("a StatefulSet named db-1").hasValue(12);
        assertThat(StatefulSetScale.ordinal("ringkv")).isEmpty();
        assertThat(StatefulSetScale.ordinal("-3")).as("no StatefulSet name").isEmpty();
        assertThat(StatefulSetScale.ordinal("ringkv-")).isEmpty();
        assertThat(StatefulSetScale.ordinal("ringkv-7d9f8-x2k4q")).as("a Deployment's pod").isEmpty();
        assertThat(StatefulSetScale.ordinal("ringkv-99999999999")).isEmpty();
        assertThat(StatefulSetScale.podOf("http://ringkv-2.ringkv-headless.shop.svc:8080")).isEqualTo("ringkv-2");
        assertThat(StatefulSetScale.podOf("http://127.0.0.1:8080")).isEqualTo("127");
    }

    @Test
    void outsideAPodThereIsNoApiToAsk() {
        assertThatThrownBy(() -> StatefulSetScale.inCluster("ringkv", "ringkv-1"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("no Kubernetes API");
        assertThatThrownBy(() -> StatefulSetScale.inCluster("ringkv", "web-1"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not a pod of the StatefulSet");
    }

    @Test
    void theIntendedMembersAreThePodsBelowTheReplicasNamedAsThisPodIs() {
        URI self = URI.create("http://ringkv-1.ringkv-headless.shop.svc.cluster.local:8080");
        assertThat(pod(1).intendedMembers(self).block(Duration.ofSeconds(5))).containsExactly(
                "http://ringkv-0.ringkv-headless.shop.svc.cluster.local:8080",
                "http://ringkv-1.ringkv-headless.shop.svc.cluster.local:8080",
                "http://ringkv-2.ringkv-headless.shop.svc.cluster.local:8080");
        replicas.set(5);
        assertThat(pod(1).intendedMembers(self).block(Duration.ofSeconds(5))).hasSize(5)
                .contains("http://ringkv-4.ringkv-headless.shop.svc.cluster.local:8080");
        assertThat(StatefulSetScale.memberNames(URI.create("https://db-0.db:8443"), "db", 2))
                .containsExactly("https://db-0.db:8443", "https://db-1.db:8443");
        assertThatThrownBy(() -> StatefulSetScale.memberNames(URI.create("http://web-0.web:8080"), "ringkv", 3))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not the name of a pod");
    }
}
