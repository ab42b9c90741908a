package io.ringkv.security;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import org.springframework.web.server.WebFilterChain;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The data routes' bearer check on its own: what it takes, and each answer it gives. That the
 * answers are the chain's, route by route and role by role through a node, is AccessRulesRouteTest's
 * and TokenRefusalsTest's to show.
 */
class DataRouteAccessTest {

    private static final String READER = "reader-0123456789abcdef";
    private static final String WRITER = "writer-0123456789abcdef";
    private static final int MAX_FAILURES = 2;

    @TempDir
    Path dir;
    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private final AtomicInteger passed = new AtomicInteger();
    private final WebFilterChain rest = exchange -> Mono.fromRunnable(passed::incrementAndGet);
    private DataRouteAccess access;

    @BeforeEach
    void tokens() throws IOException {
        Path file = Files.writeString(dir.resolve("tokens"), READER + " read reader\n" + WRITER + " write writer\n");
        var tokens = ClientTokens.load(file, Duration.ofMinutes(1), Schedulers.immediate(), meters);
        var throttle = new FailedTokenThrottle(MAX_FAILURES, Duration.ofHours(1), 100, System::nanoTime);
        access = new DataRouteAccess(tokens, new Refusals(meters, throttle));
    }

    @Test
    void aTokenWhoseRoleIsEnoughGoesOnDecided() {
        var read = send(MockServerHttpRequest.get("/v0/entity?id=k"), READER);
        var write = send(MockServerHttpRequest.put("/v0/entity?id=k"), WRITER);
        var range = send(MockServerHttpRequest.get("/v0/entities?start=a"), WRITER);

        assertThat(passed).hasValue(3);
        for (var exchange : new MockServerWebExchange[] {read, write, range}) {
            assertThat(exchange.getResponse().getStatusCode()).isNull();
            assertThat(DataRouteAccess.decided(exchange)).isTrue();
        }
    }

    @Test
    void aRoleThatIsNotEnoughIsForbidden() {
        var exchange = send(MockServerHttpRequest.delete("/v0/entity?id=k"), READER);

        assertThat(passed).hasValue(0);
        assertThat(exchange.getResponse().getStatusCode()).isEqualTo(HttpStatus.FORBIDDEN);
        assertThat(refused("forbidden")).isEqualTo(1);
    }

    @Test
    void noTokenIsChallenged() {
        var exchange = send(MockServerHttpRequest.get("/v0/entity?id=k"), null);

        assertThat(passed).hasValue(0);
        assertThat(exchange.getResponse().getStatusCode()).isEqualTo(HttpStatus.UNAUTHORIZED);
        assertThat(exchange.getResponse().getHeaders().getFirst(HttpHeaders.WWW_AUTHENTICATE)).isEqualTo(Refusals.REALM);
        assertThat(refused("missing_token")).isEqualTo(1);
    }

    @Test
    void unknownTokensAreRefusedThenTheirAddressIsThrottled() {
        for (int i = 0; i < MAX_FAILURES; i++) {
            var exchange = send(MockServerHttpRequest.get("/v0/entity?id=k"), "guess-" + i);
            assertThat(exchange.getResponse().getStatusCode()).isEqualTo(HttpStatus.UNAUTHORIZED);
            assertThat(exchange.getResponse().getHeaders().getFirst(HttpHeaders.WWW_AUTHENTICATE)).contains("invalid_token");
        }
        var throttled = send(MockServerHttpRequest.get("/v0/entity?id=k"), READER);

        assertThat(passed).hasValue(0);
        assertThat(throttled.getResponse().getStatusCode()).isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
        assertThat(throttled.getResponse().getHeaders().getFirst(HttpHeaders.RETRY_AFTER)).isNotBlank();
        assertThat(refused("unknown_token")).isEqualTo(MAX_FAILURES);
        assertThat(refused("throttled")).isEqualTo(1);
    }

    @Test
    void aTokenInTheQueryStringIsRefused() {
        var exchange = send(MockServerHttpRequest.get("/v0/entity?id=k&access_token=" + READER), null);

        assertThat(passed).hasValue(0);
        assertThat(exchange.getResponse().getStatusCode()).isEqualTo(HttpStatus.BAD_REQUEST);
        assertThat(refused("query_token")).isEqualTo(1);
    }

    @Test
    void otherRoutesMethodsAndSpellingsAreLeftToSpringSecurity() {
        var requests = new MockServerHttpRequest.BaseBuilder<?>[] {
                MockServerHttpRequest.get("/v0/cluster"),
                MockServerHttpRequest.post("/v0/entity?id=k"),
                MockServerHttpRequest.options("/v0/entity?id=k"),
                MockServerHttpRequest.get("/v0/entity/?id=k"),
                MockServerHttpRequest.get("/v0/%65ntity?id=k"),
                MockServerHttpRequest.get("/v0/entity;x=y?id=k"),
                MockServerHttpRequest.get("//v0/entity?id=k")};
        for (var request : requests) {
            var exchange = send(request, null);
            assertThat(DataRouteAccess.decided(exchange)).as(exchange.getRequest().getURI().toString()).isFalse();
            assertThat(exchange.getResponse().getStatusCode()).isNull();
        }
        assertThat(passed).hasValue(requests.length);
    }

    private MockServerWebExchange send(MockServerHttpRequest.BaseBuilder<?> request, String token) {
        request.remoteAddress(new InetSocketAddress("192.0.2.7", 40000));
        if (token != null) {
            request.header(HttpHeaders.AUTHORIZATION, "Bearer " + token);
        }
        var exchange = MockServerWebExchange.from(request.build());
        access.filter(exchange, rest).block();
        return exchange;
    }

    private double refused(String reason) {
        return meters.get("ringkv.security.failed.attempts").tag("reason", reason).counter().count();
    }
}
