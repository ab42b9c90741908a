package io.ringkv.container;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * HTTP calls from the test to nodes in containers, through their ports mapped to loopback; over
 * TLS and with the admin token to {@link SecuredNodes}.
 */
final class NodeClient {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private final HttpClient http;
    private final String token;

    NodeClient() {
        this(null);
    }

    NodeClient(SecuredNodes secured) {
        HttpClient.Builder builder = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(2));
        if (secured != null) {
            builder.sslContext(secured.clientContext());
        }
        this.http = builder.build();
        this.token = secured == null ? null : secured.token();
    }

    Response putEntity(URI node, String id, String replicas, String value) {
        return send(HttpRequest.newBuilder(entity(node, id, replicas))
                .PUT(HttpRequest.BodyPublishers.ofString(value, StandardCharsets.UTF_8)));
    }

    Response deleteEntity(URI node, String id, String replicas) {
        return send(HttpRequest.newBuilder(entity(node, id, replicas)).DELETE());
    }

    Response getEntity(URI node, String id, String replicas) {
        return send(HttpRequest.newBuilder(entity(node, id, replicas)).GET());
    }

    /** A GET of any path; headers as name, value, name, value, ... */
    Response get(URI node, String pathAndQuery, String... headers) {
        HttpRequest.Builder request = HttpRequest.newBuilder(node.resolve(pathAndQuery)).GET();
        for (int i = 0; i + 1 < headers.length; i += 2) {
            request.header(headers[i], headers[i + 1]);
        }
        return send(request);
    }

    /**
     * The node's view of the cluster, from {@code GET /v0/cluster}. A node that does not answer, or
     * answers anything but 200 with JSON, fails an assertion (so that polling with untilAsserted
     * goes on).
     */
    ClusterView cluster(URI node) {
        Response response;
        try {
            response = get(node, "/v0/cluster");
        } catch (UncheckedIOException e) {
            throw new AssertionError(e.getMessage(), e);
        }
        if (response.status() != 200) {
            throw new AssertionError("GET /v0/cluster on " + node + " answered " + response);
        }
        try {
            JsonNode root = JSON.readTree(response.body());
            List<Member> members = new ArrayList<>();
            for (JsonNode member : root.path("members")) {
                members.add(new Member(text(member.get("name")), text(member.get("address")), text(member.get("state")),
                        text(member.get("dataState"))));
            }
            return new ClusterView(text(root.get("self")), root.path("version").asLong(-1), root.path("known").asBoolean(false),
                    members, response.body());
        } catch (RuntimeException e) {
            throw new AssertionError("GET /v0/cluster on " + node + " answered JSON the test cannot read: " + response.body(), e);
        }
    }

    private static String text(JsonNode node) {
        return node == null || node.isNull() ? null : node.asString();
    }

    private static URI entity(URI node, String id, String replicas) {
        String query = "id=" + id + (replicas == null ? "" : "&replicas=" + replicas);
        return node.resolve("/v0/entity?" + query);
    }

    private Response send(HttpRequest.Builder request) {
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        HttpRequest built = request.timeout(Duration.ofSeconds(10)).build();
        try {
            HttpResponse<String> response = http.send(built, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
            return new Response(response.statusCode(), response.body());
        } catch (IOException e) {
            throw new UncheckedIOException(built.method() + " " + built.uri() + " failed: " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    record Response(int status, String body) {
        @Override
        public String toString() {
            String shown = body.length() > 200 ? body.substring(0, 200) + "..." : body;
            return status + " " + shown.strip();
        }
    }

    /** @param dataState JOINING, NORMAL, LEAVING or LEFT */
    record Member(String name, String address, String state, String dataState) {
    }

    /**
     * What {@code GET /v0/cluster} says; {@code raw} is the JSON, for failure messages.
     *
     * @param known whether the node has found its members (past discovery's bootstrap gate)
     */
    record ClusterView(String self, long version, boolean known, List<Member> members, String raw) {

        /** The ring: every member's name, sorted. */
        List<String> ring() {
            return members.stream().map(Member::name).sorted().toList();
        }

        Member member(String name) {
            return members.stream().filter(member -> name.equals(member.name())).findFirst().orElse(null);
        }

        @Override
        public String toString() {
            return raw;
        }
    }
}
