package io.ringkv.kubernetes;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.function.Supplier;

import io.netty.handler.codec.http.HttpHeaderNames;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.netty.http.Http11SslContextSpec;
import reactor.netty.http.client.HttpClient;

/**
 * The Kubernetes API server as this pod sees it: its address from the environment Kubernetes sets,
 * and the pod's namespace, token and CA from the mounted service account. The node asks it two
 * things (its StatefulSet's spec.replicas: the ring's members, and is this pod scaled away; once,
 * at start, its Node's zone label), which do not justify a Kubernetes client library: Reactor
 * Netty's client, already in the node, does it.
 */
public final class KubernetesApi {

    /** Where Kubernetes mounts a pod's service account. */
    public static final Path SERVICE_ACCOUNT = Path.of("/var/run/secrets/kubernetes.io/serviceaccount");
    private static final Duration TIMEOUT = Duration.ofSeconds(5);

    /** What the API server answered: the status code and the body (JSON, possibly an error Status). */
    public record Answer(int status, String body) {
    }

    private final HttpClient http;
    private final URI server;
    private final String namespace;
    private final Supplier<String> token;

    /**
     * @param http      a client that trusts the API server
     * @param server    the API server's base URL
     * @param namespace this pod's namespace
     * @param token     the bearer token, read for each call (Kubernetes rotates it)
     */
    public KubernetesApi(HttpClient http, URI server, String namespace, Supplier<String> token) {
        this.http = http;
        this.server = server;
        this.namespace = namespace;
        this.token = token;
    }

    /**
     * From inside a pod.
     *
     * @throws IllegalArgumentException when this is no pod with a service account token
     */
    public static KubernetesApi inCluster() {
        String host = System.getenv("KUBERNETES_SERVICE_HOST");
        String port = System.getenv("KUBERNETES_SERVICE_PORT");
        Path tokenFile = SERVICE_ACCOUNT.resolve("token");
        if (host == null || port == null || !Files.isReadable(tokenFile)) {
            throw new IllegalArgumentException("no Kubernetes API here (KUBERNETES_SERVICE_HOST/PORT unset, or no service "
                    + "account token in " + SERVICE_ACCOUNT + "; the pod needs automountServiceAccountToken)");
        }
        String hostLiteral = host.contains(":") ? "[" + host + "]" : host;
        HttpClient http = HttpClient.create().secure(spec -> spec.sslContext(
                Http11SslContextSpec.forClient().configure(builder -> builder.trustManager(SERVICE_ACCOUNT.resolve("ca.crt").toFile()))));
        return new KubernetesApi(http, URI.create("https://" + hostLiteral + ":" + port),
                read(SERVICE_ACCOUNT.resolve("namespace")).strip(), () -> read(tokenFile).strip());
    }

    public String namespace() {
        return namespace;
    }

    /** GET of a path on the API server, such as {@code /apis/apps/v1/namespaces/<ns>/statefulsets/<name>}. */
    public Mono<Answer> get(String path) {
        return authorized().flatMap(client -> client.get().uri(server.resolve(path).toString())
                        .responseSingle((response, body) -> body.asString().defaultIfEmpty("")
                                .map(text -> new Answer(response.status().code(), text))))
                .timeout(TIMEOUT);
    }

    /** The client with this call's token, read off the event loop: it is a file. */
    private Mono<HttpClient> authorized() {
        return Mono.fromCallable(token::get)
                .subscribeOn(Schedulers.boundedElastic())
                .map(bearer -> http.headers(headers -> headers.set(HttpHeaderNames.AUTHORIZATION, "Bearer " + bearer)));
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
    }
}
