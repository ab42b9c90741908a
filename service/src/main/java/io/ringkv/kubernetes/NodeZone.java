package io.ringkv.kubernetes;

import java.util.Optional;

import io.ringkv.ring.Member;
import io.ringkv.settings.InvalidSettingException;
import reactor.core.publisher.Mono;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The zone of the Kubernetes Node a pod runs on: the Node's {@code topology.kubernetes.io/zone}
 * label, read through the API server as the pod's service account. The downward API gives a pod
 * its Node's name but not the Node's labels, hence the call, and the right it needs: {@code get}
 * on {@code nodes}, cluster-wide, as a Node is no namespace's (the chart's ClusterRole
 * {@code <namespace>-<release>-node-reader}).
 *
 * @param api  the API server, as this pod's service account
 * @param node the Node's name
 */
public record NodeZone(KubernetesApi api, String node) {

    /** The well-known label cloud providers (and kubelets told so) put on each Node. */
    public static final String LABEL = "topology.kubernetes.io/zone";

    private static final JsonMapper JSON = JsonMapper.builder().build();

    /**
     * The zone of Node {@code node}, read once as the node starts, from inside its pod; empty when
     * the Node has no zone label.
     *
     * @param setting where the Node's name was set: what is refused when the zone cannot be read
     * @throws InvalidSettingException when the API refuses or cannot be reached, or the label is no
     *                                 zone: a node must not go on without the zone its peers expect
     *                                 of it, or it would place keys otherwise than they do
     */
    public static Optional<String> atStart(String setting, String node) {
        try {
            return new NodeZone(KubernetesApi.inCluster(), node).zone().block();
        } catch (RuntimeException e) {
            // Refused, unreachable, timed out, no API here, or no zone in the label.
            throw new InvalidSettingException(setting, "cannot take this node's zone from the label " + LABEL + " of Node "
                    + node + ": " + (e.getMessage() != null ? e.getMessage() : e) + ". The pod's service account needs get"
                    + " on nodes (a ClusterRole and its ClusterRoleBinding, as the chart renders with"
                    + " cluster.zones.fromNodeLabel), and the API server must answer; or give the zone by hand"
                    + " (ringkv.cluster.zone, ringkv.cluster.zones-by-ordinal)");
        }
    }

    /** The Node's zone label, read now; empty when it has none. */
    public Mono<Optional<String>> zone() {
        String path = "/api/v1/nodes/" + node;
        return api.get(path).map(answer -> zone("GET " + path, answer));
    }

    /**
     * The zone in the API server's answer about a Node: its {@code topology.kubernetes.io/zone}
     * label, which must be a zone a member can have; empty when the label is missing or empty.
     *
     * @param request what was asked, for the messages
     * @throws IllegalStateException when the answer is an error (its status, and the API server's
     *                               reason), or the label is not a Kubernetes label value
     */
    static Optional<String> zone(String request, KubernetesApi.Answer answer) {
        if (answer.status() != 200) {
            throw new IllegalStateException(request + " answered " + answer.status() + reason(answer.body()));
        }
        JsonNode label = JSON.readTree(answer.body()).path("metadata").path("labels").path(LABEL);
        if (!label.isString() || label.stringValue().isEmpty()) {
            return Optional.empty();
        }
        if (!Member.validText(label.stringValue())) {
            throw new IllegalStateException("its value, '" + label.stringValue() + "', is not " + Member.TEXT_FORM);
        }
        return Optional.of(label.stringValue());
    }

    /** The message of an error Status the API server answered with, if the body is one. */
    private static String reason(String body) {
        try {
            JsonNode message = JSON.readTree(body).path("message");
            return message.isString() ? " (" + message.stringValue() + ")" : "";
        } catch (JacksonException e) {
            return "";
        }
    }
}
