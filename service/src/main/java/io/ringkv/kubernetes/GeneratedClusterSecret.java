package io.ringkv.kubernetes;

import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Base64;
import java.util.HexFormat;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.util.retry.Retry;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * The cluster secret kept in a Kubernetes Secret that the nodes create themselves: the first node
 * to start finds none and creates it with a random value; every other node, then and later, reads
 * that one. A create that loses a race (409) reads the winner's. So no rendering of the chart holds
 * a secret: {@code helm template} and GitOps tools render the same manifests every time, and
 * nothing rolls the pods or splits them into two groups that refuse each other.
 *
 * <p>The Secret is not the chart's: {@code helm uninstall} leaves it behind, as it leaves the data
 * volumes, and a reinstall reuses both.
 */
public final class GeneratedClusterSecret {

    /** The key that holds the secret, as in a Secret an operator provides. */
    public static final String KEY = "cluster-secret";

    private static final Logger log = LoggerFactory.getLogger(GeneratedClusterSecret.class);
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final SecureRandom RANDOM = new SecureRandom();

    private final KubernetesApi api;
    private final String name;

    /**
     * @param api  the API server, as this pod's service account
     * @param name the Secret, in this pod's namespace
     */
    public GeneratedClusterSecret(KubernetesApi api, String name) {
        this.api = api;
        this.name = name;
    }

    /**
     * The secret: read, or created and then read back from what the API server stored. Answers the
     * API server may give while it starts (5xx, timeouts, refused connections) are retried for
     * about half a minute; a refusal (401, 403) or a Secret without the key fails at once, with the
     * reason.
     */
    public Mono<String> getOrCreate() {
        return read()
                .switchIfEmpty(Mono.defer(this::create))
                .retryWhen(Retry.backoff(6, Duration.ofMillis(500)).maxBackoff(Duration.ofSeconds(8))
                        .filter(error -> !(error instanceof Refused))
                        .onRetryExhaustedThrow((spec, signal) -> signal.failure()));
    }

    /** The secret if the Secret exists; empty if it does not. */
    private Mono<String> read() {
        String path = "/api/v1/namespaces/" + api.namespace() + "/secrets/" + name;
        return api.get(path).handle((answer, sink) -> {
            switch (answer.status()) {
                case 200 -> sink.next(secretOf(answer.body()));
                case 404 -> sink.complete();
                default -> sink.error(failure("GET " + path, answer));
            }
        });
    }

    private Mono<String> create() {
        // SecureRandom may read /dev/urandom: not on the event loop that brought the 404.
        return Mono.fromCallable(() -> HexFormat.of().formatHex(randomBytes(24)))
                .subscribeOn(Schedulers.boundedElastic())
                .flatMap(this::create);
    }

    private Mono<String> create(String secret) {
        String path = "/api/v1/namespaces/" + api.namespace() + "/secrets";
        ObjectNode body = JSON.createObjectNode().put("apiVersion", "v1").put("kind", "Secret").put("type", "Opaque");
        ObjectNode metadata = body.putObject("metadata").put("name", name);
        metadata.putObject("labels").put("app.kubernetes.io/managed-by", "ringkv");
        metadata.putObject("annotations").put("ringkv.io/purpose",
                "the cluster secret the ringkv nodes prove to each other; created by the first node, not by Helm");
        body.putObject("data").put(KEY, Base64.getEncoder().encodeToString(secret.getBytes(StandardCharsets.UTF_8)));
        return api.post(path, JSON.writeValueAsString(body)).flatMap(answer -> switch (answer.status()) {
            case 201 -> {
                log.info("created the Secret {} with a new random cluster secret", name);
                yield Mono.just(secretOf(answer.body()));
            }
            // Another node created it between our read and our create: take theirs.
            case 409 -> read().switchIfEmpty(Mono.error(new IllegalStateException(
                    "the Secret " + name + " exists (409 on create) but cannot be read")));
            default -> Mono.error(failure("POST " + path, answer));
        });
    }

    private String secretOf(String secretJson) {
        JsonNode value = JSON.readTree(secretJson).path("data").path(KEY);
        if (!value.isString() || value.asString().isEmpty()) {
            throw new Refused("the Secret " + name + " has no key " + KEY);
        }
        return new String(Base64.getDecoder().decode(value.asString()), StandardCharsets.UTF_8);
    }

    private RuntimeException failure(String call, KubernetesApi.Answer answer) {
        String message = call + " answered " + answer.status() + ": " + answer.body().strip();
        return answer.status() == 401 || answer.status() == 403
                ? new Refused(message + " (the pod's service account needs get and create on Secrets, and get on this one)")
                : new IllegalStateException(message);
    }

    private static byte[] randomBytes(int count) {
        byte[] bytes = new byte[count];
        RANDOM.nextBytes(bytes);
        return bytes;
    }

    /** A failure that asking again would not change. */
    static final class Refused extends RuntimeException {
        Refused(String message) {
            super(message);
        }
    }
}
