package io.ringkv.overload;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.springframework.http.HttpStatus;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import org.springframework.web.server.WebFilterChain;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

class AdmissionControlTest {

    private final AdmissionControl admission = new AdmissionControl(1, 1, new SimpleMeterRegistry());
    private final Sinks.Empty<Void> slowRequest = Sinks.empty();
    private final WebFilterChain hangs = exchange -> slowRequest.asMono();
    private final WebFilterChain answers = exchange -> Mono.empty();

    private MockServerWebExchange run(String path, WebFilterChain chain) {
        MockServerWebExchange exchange = MockServerWebExchange.from(MockServerHttpRequest.get(path));
        admission.filter(exchange, chain).block(Duration.ofSeconds(5));
        return exchange;
    }

    @Test
    void refusesClientRequestsBeyondTheBoundAtOnceWithRetryAfter() {
        Disposable busy = admission.filter(MockServerWebExchange.from(MockServerHttpRequest.get("/v0/entity?id=a")), hangs).subscribe();
        MockServerWebExchange refused = run("/v0/entity?id=b", answers);
        assertThat(refused.getResponse().getStatusCode()).isEqualTo(HttpStatus.SERVICE_UNAVAILABLE);
        assertThat(refused.getResponse().getHeaders().getFirst("Retry-After")).isEqualTo("1");

        slowRequest.tryEmitEmpty();
        busy.dispose();
        assertThat(run("/v0/entity?id=c", answers).getResponse().getStatusCode()).as("the slot is free again").isNull();
    }

    @Test
    void clientOverloadDoesNotStarveReplicaCallsOrHealthChecks() {
        admission.filter(MockServerWebExchange.from(MockServerHttpRequest.get("/v0/entity?id=a")), hangs).subscribe();
        assertThat(run("/v0/entity?id=b", answers).getResponse().getStatusCode()).isEqualTo(HttpStatus.SERVICE_UNAVAILABLE);
        assertThat(run("/internal/v0/record?id=b", answers).getResponse().getStatusCode()).isNull();
        assertThat(run("/actuator/health/readiness", answers).getResponse().getStatusCode()).isNull();
    }
}
