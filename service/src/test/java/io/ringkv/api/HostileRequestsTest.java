package io.ringkv.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;
import org.springframework.core.env.Environment;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;

import io.ringkv.support.BlockHoundInstaller;
import io.ringkv.support.Chunks;
import io.ringkv.support.RawHttp;
import io.ringkv.support.TestNode;

/**
 * Request forms a proxy or an attacker would write, sent byte for byte to a node with a secret:
 * every one is answered (no hang) below 500, none reaches anything but the public API, and the
 * stored data is exactly what the well-formed requests wrote. docs/security.md says what it tries.
 */
class HostileRequestsTest {

    private static final String SEED = "seed-key";
    private static final String SEED_VALUE = "seed-value";

    @TempDir
    static Path dataDir;

    private static TestNode node;
    private static int blockingMark;

    @BeforeAll
    static void start() throws IOException {
        blockingMark = BlockHoundInstaller.violations().size();
        int port = TestNode.freePorts(1).get(0);
        node = TestNode.create(port, dataDir, List.of(port), Map.of("ringkv.overload.body-timeout", "1s",
                "ringkv.max-value-size", "64KB")).start();
        assertThat(put("/v0/entity?id=" + SEED, SEED_VALUE)).isEqualTo(201);
    }

    @AfterAll
    static void stop() {
        node.stop();
        assertThat(BlockHoundInstaller.violationsSince(blockingMark)).as("blocking calls on event loops").isEmpty();
    }

    /** Ways of writing the internal paths of old, and the public ones, in the request line. */
    static List<String> pathForms(String path) {
        String[] parts = path.substring(1).split("/", 2);
        String first = parts[0];
        String rest = parts.length > 1 ? "/" + parts[1] : "";
        String encodedFirst = "%" + Integer.toHexString(first.charAt(0)) + first.substring(1);
        return List.of(path, path + "/", "/" + path, path.replace("/", "//"), "/" + first + ";x" + rest,
                path + ";x", "/" + first + ";" + rest, "/" + encodedFirst + rest, "/" + first + "%2F" + rest.substring(1),
                "/" + first + "%2f" + rest.substring(1), "/./" + path.substring(1), "/" + first + "/./" + rest.substring(1),
                "/x/../" + path.substring(1), "/" + first + "/x/../" + rest.substring(1), "/%2e/" + path.substring(1),
                "/x/%2e%2e/" + path.substring(1), path.toUpperCase(), "/" + first.toUpperCase() + rest, path + "%00",
                path + "%20", path + ".", path + "%2e", "\\" + path.substring(1), path.replace('/', '\\'),
                "http://localhost" + path, "http://evil.example" + path);
    }

    @Test
    void noPathFormReachesAnInternalOperation() throws IOException {
        List<String> tried = new ArrayList<>();
        for (String internal : List.of("/internal/v0/record", "/internal/v0/records", "/internal/v0/identity", "/internal/v0/hints")) {
            for (String form : pathForms(internal)) {
                for (String query : List.of("?id=" + SEED, "?start=a")) {
                    for (String method : List.of("GET", "PUT", "POST", "DELETE")) {
                        String answer = exchange(method, form + query, "\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0009evil");
                        tried.add(method + " " + form + query);
                        assertThat(status(answer)).as(method + " " + form + query).isIn(400, 404, 405);
                        assertThat(answer).as(method + " " + form + query).doesNotContain(SEED_VALUE);
                    }
                }
            }
        }
        assertUntouched();
        System.out.printf("HOSTILE internal-path forms: %d requests, 0 reached an internal operation, 0 answered 5xx%n", tried.size());
    }

    /** Every form of the public paths is either the operation itself, through its route, or a plain 4xx. */
    @Test
    void publicPathFormsAreTheOperationOrA4xx() throws IOException {
        int tried = 0;
        for (String form : pathForms("/v0/entity")) {
            String answer = exchange("GET", form + "?id=" + SEED, "");
            int status = status(answer);
            assertThat(status).as(form).isLessThan(500);
            if (status == 200) {
                assertThat(answer).as(form).endsWith(SEED_VALUE);
            }
            // Writes in any form: stored under exactly the id given, or refused.
            int put = put(form + "?id=form-" + tried, "form");
            assertThat(put).as("PUT " + form).isIn(201, 400, 404, 405);
            tried += 2;
        }
        for (String form : pathForms("/v0/entities")) {
            assertThat(status(exchange("GET", form + "?start=a", ""))).as(form).isLessThan(500);
            tried++;
        }
        assertThat(get(SEED)).isEqualTo(SEED_VALUE);
        System.out.printf("HOSTILE public-path forms: %d requests, 0 answered 5xx%n", tried);
    }

    /** Bad ids, replicas and bounds: each a 400 that changes nothing. */
    @Test
    void badParametersAre400AndChangeNothing() throws IOException {
        List<String> queries = List.of("id=", "id", "id=%", "id=%FF", "id=%C0%AF", "id=%ED%A0%80", "id=a%0Ab", "id=%00",
                "id=" + "k".repeat(1025), "id=" + "%C3%A9".repeat(513), "id=a&id=b", "%69d=a&id=b", "ID=a",
                "id=a&replicas=0/1", "id=a&replicas=2/1", "id=a&replicas=1/9", "id=a&replicas=%D9%A1/%D9%A1",
                "id=a&replicas=1/1/1", "id=a&replicas=-1/1", "id=a&replicas=1", "id=a&replicas=+1/1", "id=a&replicas=1.0/1",
                "id=a&replicas=99999999999/1", "id=a&replicas=%", "id=a&replicas=1/1&replicas=1/1", "id=a&replicas= 1/1");
        int tried = 0;
        for (String query : queries) {
            for (String method : List.of("GET", "PUT", "DELETE")) {
                String answer = exchange(method, "/v0/entity?" + query, "bad");
                assertThat(status(answer)).as(method + " " + query).isEqualTo(400);
                tried++;
            }
        }
        for (String query : List.of("", "start=", "start=b&end=a", "start=%FF", "start=a&end=%", "start=a&start=b",
                "start=" + "k".repeat(1025))) {
            assertThat(status(exchange("GET", "/v0/entities?" + query, ""))).as("range " + query).isEqualTo(400);
            tried++;
        }
        assertUntouched();
        System.out.printf("HOSTILE bad parameters: %d requests, all 400, nothing stored%n", tried);
    }

    /** Framing and headers a proxy might pass on: never a 5xx, never a hang, never a half-applied write. */
    @Test
    void malformedFramingIsRefusedWithoutHarm() throws IOException {
        List<String> heads = List.of(
                "Content-Length: -1\r\n\r\nx",
                "Content-Length: abc\r\n\r\nx",
                "Content-Length: 3\r\nContent-Length: 4\r\n\r\nxyzw",
                "Content-Length: 99999999999999999999\r\n\r\nx",
                "Transfer-Encoding: gzip, chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
                "Transfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n",
                "Transfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFF\r\nabc\r\n",
                "Transfer-Encoding: chunked\r\n\r\n3\r\nabcdef\r\n0\r\n\r\n",
                "Content-Length: 2000000\r\n\r\n" + "x".repeat(10),
                "Expect: 100-continue\r\nContent-Length: 100000\r\n\r\n",
                "X-Big: " + "h".repeat(20_000) + "\r\nContent-Length: 1\r\n\r\nx",
                "Bad Header\r\nContent-Length: 1\r\n\r\nx",
                // Smuggling: a proxy that goes by Content-Length sees one request; one going by the
                // chunked encoding would see a DELETE after it.
                "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"
                        + "DELETE /v0/entity?id=" + SEED + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        List<String> requests = new ArrayList<>();
        for (int i = 0; i < heads.size(); i++) {
            requests.add("PUT /v0/entity?id=framed-" + i + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + heads.get(i));
        }
        requests.addAll(List.of(
                "PUT /v0/entity?id=" + "k".repeat(10_000) + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 1\r\n\r\nx",
                "put /v0/entity?id=framed-lower HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 1\r\n\r\nx",
                "PATCH /v0/entity?id=framed-patch HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 1\r\n\r\nx",
                "TRACE /v0/entity?id=" + SEED + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                "OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                "CONNECT 127.0.0.1:7070 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                "GET /v0/entity?id=" + SEED + " HTTP/9.9\r\nHost: x\r\nConnection: close\r\n\r\n",
                "GET /v0/entity?id=" + SEED + "\r\n\r\n",
                "GET  /v0/entity?id=" + SEED + "  HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                "GET /v0/entity?id=a b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                "\r\n\r\n\u0016\u0003\u0001\u0000\u00a5\u0001\u0000\u0000\u00a1\u0003\u0003"));
        List<String> answers = new ArrayList<>();
        for (String request : requests) {
            String answer = RawHttp.send(node.port(), request.getBytes(StandardCharsets.ISO_8859_1));
            String shown = request.length() > 100 ? request.substring(0, 100) + "..." : request;
            answers.add(answer.isEmpty() ? "closed" : String.valueOf(status(answer)));
            if (!answer.isEmpty()) {
                assertThat(status(answer)).as(shown).isLessThan(500);
            }
        }
        System.out.println("HOSTILE framing answers: " + answers);
        // A chunked body is a body: the DELETE after the smuggling attempt must not run.
        assertThat(get(SEED)).isEqualTo(SEED_VALUE);
        // None is well framed: nothing stored, neither cut short nor empty in the value's place.
        List<String> stored = Chunks.get(node.url() + "/v0/entities?start=framed&end=framee").chunks();
        assertThat(stored).as("writes applied from malformed requests").isEmpty();
        System.out.printf("HOSTILE framing and headers: %d requests, 0 answered 5xx, 0 hung%n", requests.size());
    }

    /**
     * Transfer-Encoding other than one header saying exactly {@code chunked}: a proxy going by
     * another of the headers, or by the last coding, would frame the body differently. Each is a
     * 400 that stores nothing.
     */
    @Test
    void transferEncodingOtherThanOneChunkedIs400() throws IOException {
        String body = "\r\n3\r\nabc\r\n0\r\n\r\n";
        List<String> codings = List.of(
                "Transfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n",
                "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n",
                "Transfer-Encoding: identity\r\nTransfer-Encoding: chunked\r\n",
                "Transfer-Encoding: chunked, chunked\r\n",
                "Transfer-Encoding: chunked, identity\r\n");
        for (int i = 0; i < codings.size(); i++) {
            String request = "PUT /v0/entity?id=coding-" + i + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + codings.get(i) + body;
            String answer = RawHttp.send(node.port(), request.getBytes(StandardCharsets.ISO_8859_1));
            assertThat(status(answer)).as(codings.get(i)).isEqualTo(400);
        }
        assertThat(Chunks.get(node.url() + "/v0/entities?start=coding&end=codinh").chunks()).as("stored").isEmpty();
    }

    /** Connections that never send a request are closed by default (ActuatorTest shows the timeout at work on both ports). */
    @Test
    void idleConnectionsAreClosedByDefault() {
        assertThat(node.bean(Environment.class).getProperty("server.netty.idle-timeout", Duration.class)).isEqualTo(Duration.ofSeconds(60));
    }

    /**
     * A flood of bad requests must not flood the log: at most a few lines, with a count, never a
     * client's request line or query (they may hold anything, tokens included), never a stack
     * trace for a client's bad framing.
     */
    @Test
    void badRequestsDoNotFloodTheLog() throws IOException {
        String marker = "flood-marker-query";
        Logger root = (Logger) LoggerFactory.getLogger(Logger.ROOT_LOGGER_NAME);
        ListAppender<ILoggingEvent> logged = new ListAppender<>();
        logged.start();
        root.addAppender(logged);
        try {
            for (int i = 0; i < 100; i++) {
                String request = "GET /v0/entity?id=" + marker + i + " HTTP/1.1 junk\r\nHost: x\r\nConnection: close\r\n\r\n";
                RawHttp.send(node.port(), request.getBytes(StandardCharsets.ISO_8859_1));
            }
            for (int i = 0; i < 5; i++) {
                String request = "PUT /v0/entity?id=" + marker + "-chunked" + i + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                        + "Transfer-Encoding: chunked\r\n\r\n3\r\nabcdef\r\n0\r\n\r\n";
                assertThat(status(RawHttp.send(node.port(), request.getBytes(StandardCharsets.ISO_8859_1)))).isEqualTo(400);
            }
        } finally {
            root.detachAppender(logged);
        }
        List<ILoggingEvent> lines = logged.list.stream().filter(event -> event.getLevel().isGreaterOrEqual(Level.INFO)).toList();
        lines.forEach(event -> System.out.println("LOGGED " + event.getLevel() + " " + event.getLoggerName() + ": "
                + event.getFormattedMessage() + (event.getThrowableProxy() == null ? "" : " [" + event.getThrowableProxy().getClassName() + "]")));
        assertThat(lines).as("lines logged for 105 bad requests").hasSizeLessThanOrEqualTo(4);
        assertThat(lines).allSatisfy(event -> {
            assertThat(event.getFormattedMessage()).as("a logged line").doesNotContain(marker);
            assertThat(event.getThrowableProxy()).as("the stack trace of " + event.getFormattedMessage()).isNull();
        });
    }

    private static void assertUntouched() {
        assertThat(get(SEED)).isEqualTo(SEED_VALUE);
        assertThat(Chunks.get(node.url() + "/v0/entities?start=%01").chunks())
                .allSatisfy(chunk -> assertThat(chunk).matches("(?s)(seed-key\nseed-value|form-\\d+\nform)"));
    }

    private static String get(String id) {
        String answer = exchange("GET", "/v0/entity?id=" + id, "");
        return status(answer) == 200 ? answer.substring(answer.indexOf("\r\n\r\n") + 4) : null;
    }

    private static int put(String target, String body) {
        return status(exchange("PUT", target, body));
    }

    private static String exchange(String method, String target, String body) {
        try {
            return RawHttp.exchange(node.port(), method, target.getBytes(StandardCharsets.ISO_8859_1),
                    body.getBytes(StandardCharsets.ISO_8859_1));
        } catch (IOException e) {
            throw new AssertionError(method + " " + target + ": no answer (" + e + ")", e);
        }
    }

    private static int status(String answer) {
        assertThat(answer).as("an HTTP answer").matches("(?s)HTTP/\\d\\.\\d \\d{3} .*");
        return Integer.parseInt(answer.substring(9, 12));
    }
}
