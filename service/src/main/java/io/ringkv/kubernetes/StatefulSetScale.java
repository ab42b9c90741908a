package io.ringkv.kubernetes;

import java.util.OptionalInt;

import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Whether this pod is being scaled away: its StatefulSet's {@code spec.replicas}, read through the
 * Kubernetes API as the pod's service account (a Role that may only {@code get} this one
 * StatefulSet), against the pod's ordinal. A pod stopped with an ordinal at or above the replicas
 * is not coming back; any other stop is a restart. Works alike for {@code helm upgrade} and
 * {@code kubectl scale}, which both only change {@code spec.replicas}.
 */
public final class StatefulSetScale {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private final KubernetesApi api;
    private final String name;
    private final int ordinal;

    /**
     * @param api     the API server, as this pod's service account
     * @param name    this pod's StatefulSet
     * @param ordinal this pod's ordinal in the StatefulSet
     */
    public StatefulSetScale(KubernetesApi api, String name, int ordinal) {
        this.api = api;
        this.name = name;
        this.ordinal = ordinal;
    }

    /**
     * From inside a pod.
     *
     * @param name this pod's StatefulSet
     * @param pod  this pod's name ({@code <statefulset>-<ordinal>})
     * @throws IllegalArgumentException when the pod's name is not of its StatefulSet, or this is no pod with a service account
     */
    public static StatefulSetScale inCluster(String name, String pod) {
        int ordinal = ordinal(pod, name).orElseThrow(() -> new IllegalArgumentException(
                "this pod, " + pod + ", is not a pod of the StatefulSet " + name + " (<name>-<ordinal>)"));
        return new StatefulSetScale(KubernetesApi.inCluster(), name, ordinal);
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
        String path = "/apis/apps/v1/namespaces/" + api.namespace() + "/statefulsets/" + name;
        return api.get(path).map(answer -> {
            if (answer.status() != 200) {
                throw new IllegalStateException("GET " + path + " answered " + answer.status());
            }
            return replicas(answer.body()) <= ordinal;
        });
    }

    static int replicas(String statefulSetJson) {
        JsonNode replicas = JSON.readTree(statefulSetJson).path("spec").path("replicas");
        if (!replicas.isInt()) {
            throw new IllegalStateException("the StatefulSet has no spec.replicas");
        }
        return replicas.intValue();
    }
}
