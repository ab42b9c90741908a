package io.ringkv.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.HttpStatus;
import org.springframework.test.web.reactive.server.WebTestClient;

import io.ringkv.support.BlockHoundInstaller;
import io.ringkv.support.Chunks;
import io.ringkv.support.RawHttp;
import io.ringkv.support.TestNode;
import reactor.core.publisher.Flux;

/** The public API on a single node: every status code, and bad input that changes nothing. */
class EntityApiTest {

    private static final int MAX_VALUE = 64 * 1024;

    @TempDir
    static Path dataDir;

    private static TestNode node;
    private static WebTestClient client;
    private static int blockingMark;

    @BeforeAll
    static void start() {
        blockingMark = BlockHoundInstaller.violations().size();
        int port = TestNode.freePorts(1).get(0);
        node = TestNode.create(port, dataDir, List.of(port), Map.of("ringkv.max-value-size", MAX_VALUE + "B")).start();
        client = node.client();
    }

    @AfterAll
    static void stop() {
        node.stop();
        assertThat(BlockHoundInstaller.violationsSince(blockingMark)).as("blocking calls on event loops").isEmpty();
    }

    @Test
    void statusAnswers200() {
        client.get().uri("/v0/status").exchange().expectStatus().isOk();
    }

    @Test
    void storesAndReturnsExactlyTheBytesPut() {
        byte[] every = new byte[256];
        for (int i = 0; i < every.length; i++) {
            every[i] = (byte) i;
        }
        client.put().uri("/v0/entity?id=binary").bodyValue(every).exchange().expectStatus().isCreated();
        client.get().uri("/v0/entity?id=binary").exchange()
                .expectStatus().isOk()
                .expectBody(byte[].class).isEqualTo(every);
    }

    @Test
    void storesAnEmptyValue() {
        client.put().uri("/v0/entity?id=empty").exchange().expectStatus().isCreated();
        client.get().uri("/v0/entity?id=empty").exchange().expectStatus().isOk().expectBody().isEmpty();
    }

    @Test
    void overwritesAndDeletes() {
        client.put().uri("/v0/entity?id=k").bodyValue("one".getBytes()).exchange().expectStatus().isCreated();
        client.put().uri("/v0/entity?id=k").bodyValue("two".getBytes()).exchange().expectStatus().isCreated();
        client.get().uri("/v0/entity?id=k").exchange().expectBody(String.class).isEqualTo("two");
        client.delete().uri("/v0/entity?id=k").exchange().expectStatus().isAccepted();
        client.get().uri("/v0/entity?id=k").exchange().expectStatus().isNotFound();
        client.delete().uri("/v0/entity?id=never-written").exchange().expectStatus().isAccepted();
        client.get().uri("/v0/entity?id=never-written").exchange().expectStatus().isNotFound();
    }

    @Test
    void acceptsAnyUnicodeKeyUpTo1KiB() {
        String key = "ключ/with spaces&symbols=?#";
        client.put().uri(uri -> uri.path("/v0/entity").queryParam("id", "{id}").build(key))
                .bodyValue("v".getBytes()).exchange().expectStatus().isCreated();
        client.get().uri(uri -> uri.path("/v0/entity").queryParam("id", "{id}").build(key))
                .exchange().expectStatus().isOk().expectBody(String.class).isEqualTo("v");
        String longest = "k".repeat(1024);
        client.put().uri("/v0/entity?id=" + longest).bodyValue("v".getBytes()).exchange().expectStatus().isCreated();
    }

    @Test
    void rejectsAMissingEmptyRepeatedOrTooLongId() {
        for (String query : List.of("", "?id=", "?id=a&id=b", "?id=" + "k".repeat(1025), "?other=1")) {
            client.get().uri("/v0/entity" + query).exchange().expectStatus().isBadRequest();
            client.put().uri("/v0/entity" + query).bodyValue("v".getBytes()).exchange().expectStatus().isBadRequest();
            client.delete().uri("/v0/entity" + query).exchange().expectStatus().isBadRequest();
        }
        client.get().uri("/v0/entity?id=").exchange().expectBody(String.class)
                .value(body -> assertThat(body).contains("'id'"));
        client.get().uri("/v0/entity?id=" + "k".repeat(1025)).exchange().expectStatus().isBadRequest();
    }

    /** A newline would make a range's key\nvalue ambiguous; NUL-led keys are the node's own. */
    @Test
    void rejectsIdsWithControlCharactersAndChangesNothing() {
        for (String id : List.of("a%0Ab", "%00x", "tab%09", "del%7F", "cr%0D")) {
            java.net.URI uri = java.net.URI.create(node.url() + "/v0/entity?id=" + id);
            client.put().uri(uri).bodyValue("v".getBytes()).exchange().expectStatus().isBadRequest()
                    .expectBody(String.class).value(body -> assertThat(body).contains("control character"));
            client.get().uri(uri).exchange().expectStatus().isBadRequest();
            client.delete().uri(uri).exchange().expectStatus().isBadRequest();
        }
        assertThat(node.stored("a\nb")).isEmpty();
    }

    /** Decoded like a path, not a form: otherwise "a+b" and "a b", or two invalid byte strings, are one key. */
    @Test
    void decodesIdsExactlySoThatNoTwoIdsShareAKey() throws Exception {
        client.put().uri(java.net.URI.create(node.url() + "/v0/entity?id=a+b")).bodyValue("plus".getBytes()).exchange()
                .expectStatus().isCreated();
        client.put().uri(java.net.URI.create(node.url() + "/v0/entity?id=a%20b")).bodyValue("space".getBytes()).exchange()
                .expectStatus().isCreated();
        client.get().uri(java.net.URI.create(node.url() + "/v0/entity?id=a%2Bb")).exchange()
                .expectBody(String.class).isEqualTo("plus");
        assertThat(node.stored("a+b")).isPresent();
        assertThat(node.stored("a b")).isPresent();

        // Written byte for byte: client libraries refuse or repair some of these forms.
        for (String id : List.of("%FF", "x%C3", "%ED%A0%80", "%C0%AF", "bad%ZZ", "trailing%", "raw\u00ff")) {
            for (String method : List.of("PUT", "GET", "DELETE")) {
                assertThat(RawHttp.status(node.port(), method, "/v0/entity?id=" + id, "v")).as(method + " " + id).isEqualTo(400);
            }
        }
        // Raw UTF-8 in the request line (not HTTP, but sent) is the same id as its escaped form...
        assertThat(RawHttp.status(node.port(), "PUT", "/v0/entity?id=raw-" + latin1("é"), "raw")).isEqualTo(201);
        client.get().uri(java.net.URI.create(node.url() + "/v0/entity?id=raw-%C3%A9")).exchange()
                .expectBody(String.class).isEqualTo("raw");
        // ...unless its bytes read as control characters, which the server refuses before any handler.
        assertThat(RawHttp.status(node.port(), "PUT", "/v0/entity?id=raw-" + latin1("ключ"), "raw")).isEqualTo(400);
        assertThat(node.stored("raw-ключ")).isEmpty();
        assertThat(node.stored("\uFFFD")).isEmpty();
        assertThat(node.stored("x\uFFFD")).isEmpty();
    }

    private static String latin1(String text) {
        return new String(text.getBytes(StandardCharsets.UTF_8), StandardCharsets.ISO_8859_1);
    }

    @Test
    void rejectsBadReplicasAndChangesNothing() {
        // %D9%A1 is '١', an Arabic-Indic one, which Integer.parseInt would take.
        for (String replicas : List.of("0/1", "2/1", "1/2", "x", "1", "1/1/1", "-1/1", "%D9%A1/%D9%A1", "1%2F1%2F1")) {
            java.net.URI uri = java.net.URI.create(node.url() + "/v0/entity?id=guarded&replicas=" + replicas);
            client.put().uri(uri).bodyValue("v".getBytes()).exchange().expectStatus().isBadRequest();
            client.delete().uri(uri).exchange().expectStatus().isBadRequest();
            client.get().uri(uri).exchange().expectStatus().isBadRequest();
        }
        client.get().uri("/v0/entity?id=guarded").exchange().expectStatus().isNotFound();
        client.put().uri("/v0/entity?id=guarded&replicas=1/1").bodyValue("v".getBytes()).exchange().expectStatus().isCreated();
    }

    @Test
    void refusesValuesOverTheLimitWith413AndStoresNothing() {
        client.put().uri("/v0/entity?id=big").bodyValue(new byte[MAX_VALUE]).exchange().expectStatus().isCreated();
        client.put().uri("/v0/entity?id=too-big").bodyValue(new byte[MAX_VALUE + 1]).exchange()
                .expectStatus().isEqualTo(HttpStatus.CONTENT_TOO_LARGE);
        // Without a Content-Length, the limit applies while the body streams in.
        Flux<DataBuffer> chunked = Flux.range(0, 20).map(i -> DefaultDataBufferFactory.sharedInstance.wrap(new byte[8 * 1024]));
        client.put().uri("/v0/entity?id=too-big").body(chunked, DataBuffer.class).exchange()
                .expectStatus().isEqualTo(HttpStatus.CONTENT_TOO_LARGE);
        client.get().uri("/v0/entity?id=too-big").exchange().expectStatus().isNotFound();
    }

    @Test
    void answersUnknownPathsWith404AndWrongMethodsWith405() {
        client.get().uri("/v0/nothing-here").exchange().expectStatus().isNotFound();
        client.get().uri("/").exchange().expectStatus().isNotFound();
        client.post().uri("/v0/entity?id=a").bodyValue("v".getBytes()).exchange().expectStatus().isEqualTo(HttpStatus.METHOD_NOT_ALLOWED);
        client.delete().uri("/v0/entities?start=a").exchange().expectStatus().isEqualTo(HttpStatus.METHOD_NOT_ALLOWED);
        client.post().uri("/v0/status").exchange().expectStatus().isEqualTo(HttpStatus.METHOD_NOT_ALLOWED);
    }

    @Test
    void streamsARangeAsOneChunkPerRecordInKeyOrder() {
        for (String key : List.of("r3", "r1", "r2", "r4")) {
            client.put().uri("/v0/entity?id=" + key).bodyValue(("value of " + key).getBytes()).exchange().expectStatus().isCreated();
        }
        client.delete().uri("/v0/entity?id=r2").exchange().expectStatus().isAccepted();

        Chunks.Response response = Chunks.get(node.url() + "/v0/entities?start=r1&end=r4");
        assertThat(response.status()).isEqualTo(200);
        assertThat(response.chunks()).containsExactly("r1\nvalue of r1", "r3\nvalue of r3");

        client.get().uri("/v0/entities?start=r3").exchange().expectStatus().isOk()
                .expectBody(String.class).isEqualTo("r3\nvalue of r3r4\nvalue of r4");
        client.get().uri("/v0/entities?start=r5&end=r6").exchange().expectStatus().isOk().expectBody().isEmpty();
        client.get().uri("/v0/entities?start=r1&end=r1").exchange().expectStatus().isOk().expectBody().isEmpty();
    }

    @Test
    void rejectsBadRangeBounds() {
        client.get().uri("/v0/entities").exchange().expectStatus().isBadRequest();
        client.get().uri("/v0/entities?start=").exchange().expectStatus().isBadRequest();
        client.get().uri("/v0/entities?start=b&end=a").exchange().expectStatus().isBadRequest()
                .expectBody(String.class).value(body -> assertThat(body).contains("end"));
        client.get().uri("/v0/entities?start=a&start=b").exchange().expectStatus().isBadRequest();
    }

    @Test
    void thePublicPortServesNoNodeToNodeOperationsInAnyForm() {
        client.put().uri("/v0/entity?id=internal-check").bodyValue("v".getBytes(StandardCharsets.UTF_8)).exchange().expectStatus().isCreated();
        // The old HTTP internal endpoints, as written and as a proxy or an attacker might write them.
        for (String path : List.of("/internal/v0/record?id=internal-check", "/internal;x/v0/records?start=a",
                "/%69nternal/v0/records?start=a", "/internal/v0/identity", "/INTERNAL/v0/record?id=internal-check")) {
            client.get().uri(java.net.URI.create(node.url() + path)).exchange().expectStatus().isNotFound();
        }
        client.put().uri("/internal/v0/record?id=x").bodyValue(new byte[] {9, 9, 9}).exchange().expectStatus().isNotFound();
        client.get().uri("/v0/entity?id=x").exchange().expectStatus().isNotFound();
    }
}
