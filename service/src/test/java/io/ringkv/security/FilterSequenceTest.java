package io.ringkv.security;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

import reactor.core.publisher.Mono;

class FilterSequenceTest {

    private final List<String> ran = new ArrayList<>();
    private final MockServerWebExchange exchange = MockServerWebExchange.from(MockServerHttpRequest.get("/v0/status"));
    private final WebFilterChain end = exchange -> Mono.fromRunnable(() -> ran.add("end"));

    private WebFilter passing(String name) {
        return (exchange, chain) -> {
            ran.add(name);
            return chain.filter(exchange);
        };
    }

    @Test
    void runsTheFiltersInOrderThenTheRestOfTheChain() {
        new FilterSequence().decorate(end, List.of(passing("first"), passing("second"))).filter(exchange).block();
        assertThat(ran).containsExactly("first", "second", "end");
    }

    @Test
    void aFilterThatAnswersStopsTheSequence() {
        WebFilter refusing = (exchange, chain) -> Mono.fromRunnable(() -> ran.add("refused"));
        new FilterSequence().decorate(end, List.of(passing("first"), refusing, passing("never"))).filter(exchange).block();
        assertThat(ran).containsExactly("first", "refused");
    }

    @Test
    void withoutFiltersOnlyTheRestOfTheChainRuns() {
        new FilterSequence().decorate(end).filter(exchange).block();
        assertThat(ran).containsExactly("end");
    }
}
