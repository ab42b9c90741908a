package io.ringkv.support;

import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;

/**
 * The public API's conditional requests as a test's client sends them, each answer reduced to
 * what a history records: its status and tag, or that it never reached the node (a refused
 * connection, which changed nothing), or that it got no answer (which may have changed anything).
 */
public final class ConditionalClient {

    /** No answer: a timeout, a connection lost after the request went out. */
    public static final int NO_ANSWER = -1;
    /** The node refused the connection: the request was never sent. */
    public static final int NOT_SENT = -2;

    /** A request's answer: the status (or {@link #NO_ANSWER}, {@link #NOT_SENT}), the ETag, the body. */
    public record Answer(int status, Optional<String> etag, String body) {
        public boolean sent() {
            return status != NOT_SENT;
        }
    }

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private final Duration timeout;

    /** @param timeout how long a request may wait for its answer: longer than ringkv.replication.conditional-timeout */
    public ConditionalClient(Duration timeout) {
        this.timeout = timeout;
    }

    public Answer get(URI node, String key, boolean serial) {
        return send(HttpRequest.newBuilder(uri(node, key, serial)).GET());
    }

    /** A PUT, conditional when {@code header} is If-Match or If-None-Match (null: plain, or serial). */
    public Answer put(URI node, String key, String value, boolean serial, String header, String headerValue) {
        HttpRequest.Builder request = HttpRequest.newBuilder(uri(node, key, serial))
                .PUT(HttpRequest.BodyPublishers.ofString(value));
        return send(header == null ? request : request.header(header, headerValue));
    }

    public Answer delete(URI node, String key, String header, String headerValue) {
        HttpRequest.Builder request = HttpRequest.newBuilder(uri(node, key, false)).DELETE();
        return send(header == null ? request : request.header(header, headerValue));
    }

    private static URI uri(URI node, String key, boolean serial) {
        return node.resolve("/v0/entity?id=" + URLEncoder.encode(key, StandardCharsets.UTF_8) + (serial ? "&consistency=serial" : ""));
    }

    private Answer send(HttpRequest.Builder request) {
        try {
            HttpResponse<String> response = http.send(request.timeout(timeout).build(), HttpResponse.BodyHandlers.ofString());
            return new Answer(response.statusCode(), response.headers().firstValue("ETag"), response.body());
        } catch (ConnectException e) {
            return new Answer(NOT_SENT, Optional.empty(), e.toString());
        } catch (IOException e) {
            return new Answer(NO_ANSWER, Optional.empty(), e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Answer(NO_ANSWER, Optional.empty(), e.toString());
        }
    }
}
