package io.ringkv.ring;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.OptionalInt;
import java.util.function.Supplier;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import reactor.core.publisher.Mono;
import reactor.netty.http.Http11SslContextSpec;
import reactor.netty.http.client.HttpClient;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Whether this pod is being scaled away: its StatefulSet's {@code spec.replicas}, read through the
 * Kubernetes API as the pod's service account (a Role that may only {@code get} this one
 * StatefulSet), against the pod's ordinal. A pod stopped with an ordinal at or above the replicas
 * is not coming back; any other stop is a restart. Works alike for {@code helm upgrade} and
 * {@code kubectl scale}, which both only change {@code spec.replicas}.
 *
 * <p>One GET at shutdown does not justify a Kubernetes client library: Reactor Netty's client,
 * already in the node, does it with the service account's token and CA.
 */
public final class StatefulSetScale {

    /** Where Kubernetes mounts a pod's service account. */
    public static final Path SERVICE_ACCOUNT = Path.of("/var/run/secrets/kubernetes.io/serviceaccount");
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final Duration TIMEOUT = Duration.ofSeconds(5);

    private final HttpClient http;
    private final URI statefulSet;
    private final Supplier<String> token;
    private final int ordinal;

    /**
     * @param http        a client that trusts the API server
     * @param statefulSet the StatefulSet's URL on the API server
     * @param token       the bearer token, read for each call (Kubernetes rotates it)
     * @param ordinal     this pod's ordinal in the StatefulSet
     */
    public StatefulSetScale(HttpClient http, URI statefulSet, Supplier<String> token, int ordinal) {
        this.http = http;
        this.statefulSet = statefulSet;
        this.token = token;
        this.ordinal = ordinal;
    }

    /**
     * From inside a pod: the API server from the environment Kubernetes sets, the namespace, token
     * and CA from the mounted service account.
     *
     * @param name this pod's StatefulSet
     * @param pod  this pod's name ({@code <statefulset>-<ordinal>})
     * @throws IllegalArgumentException when the pod's name is not of its StatefulSet, or this is no pod with a service account
     */
    public static StatefulSetScale inCluster(String name, String pod) {
        int ordinal = ordinal(pod, name).orElseThrow(() -> new IllegalArgumentException(
                "this pod, " + pod + ", is not a pod of the StatefulSet " + name + " (<name>-<ordinal>)"));
        String host = System.getenv("KUBERNETES_SERVICE_HOST");
        String port = System.getenv("KUBERNETES_SERVICE_PORT");
        Path tokenFile = SERVICE_ACCOUNT.resolve("token");
        if (host == null || port == null || !Files.isReadable(tokenFile)) {
            throw new IllegalArgumentException("no Kubernetes API here (KUBERNETES_SERVICE_HOST/PORT unset, or no service "
                    + "account token in " + SERVICE_ACCOUNT + "; the pod needs automountServiceAccountToken)");
        }
        String namespace = read(SERVICE_ACCOUNT.resolve("namespace")).strip();
        String hostLiteral = host.contains(":") ? "[" + host + "]" : host;
        HttpClient http = HttpClient.create().secure(spec -> spec.sslContext(
                Http11SslContextSpec.forClient().configure(builder -> builder.trustManager(SERVICE_ACCOUNT.resolve("ca.crt").toFile()))));
        URI url = URI.create("https://" + hostLiteral + ":" + port + "/apis/apps/v1/namespaces/" + namespace
                + "/statefulsets/" + name);
        return new StatefulSetScale(http, url, () -> read(tokenFile).strip(), ordinal);
    }

    /** The ordinal of a pod named {@code <statefulset>-<ordinal>}, if it is one of that StatefulSet's. */
    public static OptionalInt ordinal(String pod, String statefulSet) {
        String prefix = statefulSet + "-";
        if (!pod.startsWith(prefix) || pod.length() == prefix.length() || pod.length() - prefix.length() > 9) {
            return OptionalInt.empty();
        }
        String digits = pod.substring(prefix.length());
        for (int i = 0; i < digits.length(); i++) {
            if (digits.charAt(i) < '0' || digits.charAt(i) > '9') {
                return OptionalInt.empty();
            }
        }
        return OptionalInt.of(Integer.parseInt(digits));
    }

    /** True when the StatefulSet no longer counts this pod: it is stopping for good. */
    public Mono<Boolean> scaledAway() {
        String bearer = token.get();
        return http.headers(headers -> headers.set(HttpHeaderNames.AUTHORIZATION, "Bearer " + bearer))
                .get()
                .uri(statefulSet.toString())
                .responseSingle((response, body) -> response.status().equals(HttpResponseStatus.OK)
                        ? body.asString()
                        : Mono.error(new IllegalStateException("GET " + statefulSet + " answered " + response.status())))
                .map(json -> replicas(json) <= ordinal)
                .timeout(TIMEOUT);
    }

    static int replicas(String statefulSetJson) {
        JsonNode replicas = JSON.readTree(statefulSetJson).path("spec").path("replicas");
        if (!replicas.isInt()) {
            throw new IllegalStateException("the StatefulSet has no spec.replicas");
        }
        return replicas.intValue();
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
    }
}
