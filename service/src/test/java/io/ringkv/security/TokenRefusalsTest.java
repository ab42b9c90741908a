package io.ringkv.security;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.http.HttpHeaders;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.test.web.reactive.server.WebTestClient;

import io.micrometer.core.instrument.MeterRegistry;
import io.ringkv.support.TestNode;
import reactor.netty.http.client.HttpClient;

/**
 * A node with client tokens on, through its public port: a token file emptied or gone refuses the
 * tokens it held, and an address that sends unknown tokens is throttled, alone.
 */
class TokenRefusalsTest {

    private static final String TOKEN = "reader-0123456789abcdef";
    private static final String GUESS = "guess-0123456789abcdef";
    private static final int MAX_FAILURES = 3;

    @TempDir
    static Path dir;
    private static Path tokensFile;
    private static TestNode node;

    @BeforeAll
    static void start() throws IOException {
        tokensFile = Files.writeString(dir.resolve("tokens"), TOKEN + " read reader\n");
        int port = TestNode.freePorts(1).getFirst();
        node = TestNode.create(port, dir.resolve("data"), List.of(port), Map.of(
                "ringkv.security.enabled", true,
                "ringkv.security.tokens-file", tokensFile,
                // Gone is gone at the next check: the grace itself is timed in ClientTokensTest.
                "ringkv.security.tokens-missing-grace", "0s",
                "ringkv.security.throttle.failures", MAX_FAILURES,
                "ringkv.security.throttle.window", "1h")).start();
    }

    @AfterAll
    static void stop() {
        node.stop();
    }

    @Test
    void aTokenFileEmptiedOrGoneRefusesItsTokens() throws IOException {
        ClientTokens tokens = node.bean(ClientTokens.class);
        read(node.client(), TOKEN).expectStatus().isNotFound();

        Files.writeString(tokensFile, "# every client revoked\n");
        tokens.check();
        read(node.client(), TOKEN).expectStatus().isUnauthorized();

        Files.writeString(tokensFile, TOKEN + " read reader\n");
        tokens.check();
        read(node.client(), TOKEN).expectStatus().isNotFound();

        Files.delete(tokensFile);
        tokens.check();
        read(node.client(), TOKEN).expectStatus().isUnauthorized();

        Files.writeString(tokensFile, TOKEN + " read reader\n");
        tokens.check();
        read(node.client(), TOKEN).expectStatus().isNotFound();
    }

    @Test
    void anAddressThatSendsUnknownTokensIsThrottledAlone() {
        // Another loopback address than the other tests' clients, so that its throttle is its own.
        WebTestClient guesser = WebTestClient.bindToServer(new ReactorClientHttpConnector(
                HttpClient.create().bindAddress(() -> new InetSocketAddress("127.0.0.2", 0)))).baseUrl(node.url()).build();
        WebTestClient other = WebTestClient.bindToServer(new ReactorClientHttpConnector(
                HttpClient.create().bindAddress(() -> new InetSocketAddress("127.0.0.3", 0)))).baseUrl(node.url()).build();
        read(guesser, TOKEN).expectStatus().isNotFound();
        for (int i = 0; i < MAX_FAILURES; i++) {
            read(guesser, GUESS).expectStatus().isUnauthorized();
        }

        read(guesser, GUESS).expectStatus().isEqualTo(429)
                .expectHeader().value(HttpHeaders.RETRY_AFTER, seconds -> assertThat(Long.parseLong(seconds))
                        .isBetween(1L, Duration.ofHours(1).toSeconds()))
                .expectBody().jsonPath("$.status").isEqualTo(429);
        // A known token is not even checked; a request without one is decided as ever.
        read(guesser, TOKEN).expectStatus().isEqualTo(429);
        guesser.get().uri("/v0/status").exchange().expectStatus().isOk();

        read(other, TOKEN).expectStatus().isNotFound();
        read(other, GUESS).expectStatus().isUnauthorized();
        assertThat(node.bean(MeterRegistry.class).get("ringkv.security.failed.attempts").tag("reason", "throttled")
                .counter().count()).isEqualTo(2);
    }

    private static WebTestClient.ResponseSpec read(WebTestClient client, String token) {
        return client.get().uri("/v0/entity?id=absent").header(HttpHeaders.AUTHORIZATION, "Bearer " + token).exchange();
    }
}
