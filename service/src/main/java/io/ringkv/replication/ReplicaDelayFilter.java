package io.ringkv.replication;

import java.time.Duration;

import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

import reactor.core.publisher.Mono;

/**
 * Fault injection for tests: delays every call to this node's internal endpoints, making it a
 * slow replica. Registered only when {@code ringkv.testing.replica-delay} is set; waits on a timer,
 * never on a thread.
 */
public final class ReplicaDelayFilter implements WebFilter {

    private final Duration delay;

    public ReplicaDelayFilter(Duration delay) {
        this.delay = delay;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        if (!exchange.getRequest().getPath().value().startsWith(InternalApi.PREFIX)) {
            return chain.filter(exchange);
        }
        return Mono.delay(delay).then(chain.filter(exchange));
    }
}
