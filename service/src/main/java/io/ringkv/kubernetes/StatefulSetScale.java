package io.ringkv.kubernetes;

import java.io.UncheckedIOException;
import java.net.URI;
import java.util.OptionalInt;
import java.util.Set;
import java.util.TreeSet;

import io.ringkv.settings.InvalidSettingException;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The members a StatefulSet is meant to have, and whether this pod is being scaled away: its
 * {@code spec.replicas}, read through the Kubernetes API as the pod's service account (a Role that
 * may only {@code get} this one StatefulSet). The pods {@code 0..replicas-1} are the members,
 * whether they run or not; a pod stopped with an ordinal at or above the replicas is not coming
 * back, and any other stop is a restart. Works alike for {@code helm upgrade} and
 * {@code kubectl scale}, which both only change {@code spec.replicas}.
 *
 * @param api     the API server, as this pod's service account
 * @param name    this pod's StatefulSet
 * @param ordinal this pod's ordinal in the StatefulSet
 */
public record StatefulSetScale(KubernetesApi api, String name, int ordinal) {

    private static final JsonMapper JSON = JsonMapper.builder().build();

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

    /**
     * From inside the pod this node runs in, as a setting names its StatefulSet: the node's name on
     * the ring is its pod's stable DNS name ({@code <pod>.<headless service>...}).
     *
     * @param setting where the StatefulSet's name was set: what is refused if the pod is not of it,
     *                or the node runs outside Kubernetes
     * @throws InvalidSettingException then
     */
    public static StatefulSetScale ofMember(String setting, String statefulSet, String self) {
        String pod = podOf(self);
        try {
            return inCluster(statefulSet, pod);
        } catch (IllegalArgumentException | UncheckedIOException e) {
            throw new InvalidSettingException(setting, e.getMessage());
        }
    }

    /** The pod a node runs in, by the node's name on the ring: its host begins with the pod's name. */
    public static String podOf(String self) {
        return URI.create(self).getHost().split("\\.", 2)[0];
    }

    /** The ordinal of a pod named {@code <statefulset>-<ordinal>}, if it is one of that StatefulSet's. */
    public static OptionalInt ordinal(String pod, String statefulSet) {
        String prefix = statefulSet + "-";
        return pod.startsWith(prefix) ? ordinalDigits(pod.substring(prefix.length())) : OptionalInt.empty();
    }

    /**
     * The ordinal of a pod named as a StatefulSet's are ({@code <statefulset>-<ordinal>}), whichever
     * StatefulSet it is of: the digits after its last {@code -}.
     */
    public static OptionalInt ordinal(String pod) {
        int dash = pod.lastIndexOf('-');
        return dash > 0 ? ordinalDigits(pod.substring(dash + 1)) : OptionalInt.empty();
    }

    private static OptionalInt ordinalDigits(String digits) {
        if (digits.isEmpty() || digits.length() > 9) {
            return OptionalInt.empty();
        }
        for (int i = 0; i < digits.length(); i++) {
            if (digits.charAt(i) < '0' || digits.charAt(i) > '9') {
                return OptionalInt.empty();
            }
        }
        return OptionalInt.of(Integer.parseInt(digits));
    }

    /** True when the StatefulSet no longer counts this pod: it is stopping for good. */
    public Mono<Boolean> scaledAway() {
        return replicas().map(replicas -> replicas <= ordinal);
    }

    /**
     * The members the StatefulSet is meant to have: the names of its pods {@code 0..replicas-1},
     * made as this pod's own name is ({@code self}, whose host starts with this pod's name).
     */
    public Mono<Set<String>> intendedMembers(URI self) {
        return replicas().map(replicas -> memberNames(self, name, replicas));
    }

    /** Its {@code spec.replicas}, read now. */
    Mono<Integer> replicas() {
        String path = "/apis/apps/v1/namespaces/" + api.namespace() + "/statefulsets/" + name;
        return api.get(path).map(answer -> {
            if (answer.status() != 200) {
                throw new IllegalStateException("GET " + path + " answered " + answer.status());
            }
            return replicas(answer.body());
        });
    }

    /**
     * The names of a StatefulSet's pods {@code 0..replicas-1} as members: {@code self}, a pod's own
     * name (scheme, {@code <statefulset>-<ordinal>.<rest of the host>}, port), with each ordinal.
     */
    public static Set<String> memberNames(URI self, String statefulSet, int replicas) {
        String host = self.getHost();
        int dot = host.indexOf('.');
        String pod = dot < 0 ? host : host.substring(0, dot);
        if (ordinal(pod, statefulSet).isEmpty()) {
            throw new IllegalArgumentException(self + " is not the name of a pod of the StatefulSet " + statefulSet);
        }
        String rest = dot < 0 ? "" : host.substring(dot);
        Set<String> names = new TreeSet<>();
        for (int i = 0; i < replicas; i++) {
            names.add(self.getScheme() + "://" + statefulSet + "-" + i + rest + ":" + self.getPort());
        }
        return names;
    }

    static int replicas(String statefulSetJson) {
        JsonNode replicas = JSON.readTree(statefulSetJson).path("spec").path("replicas");
        if (!replicas.isInt()) {
            throw new IllegalStateException("the StatefulSet has no spec.replicas");
        }
        return replicas.intValue();
    }
}
