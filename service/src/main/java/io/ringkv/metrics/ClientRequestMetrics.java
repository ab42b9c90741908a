package io.ringkv.metrics;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.springframework.core.Ordered;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatusCode;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import reactor.core.publisher.Mono;

/**
 * Times every public API request by operation and status ({@code ringkv.client.requests}, as a
 * histogram, from which Prometheus computes any percentile across nodes), and counts the requests that failed for want of replicas
 * ({@code ringkv.client.not.enough.replicas}). Runs first, so that requests refused for overload
 * are counted too.
 */
public final class ClientRequestMetrics implements WebFilter, Ordered {

    private final MeterRegistry meters;
    /** Looked up once per operation and status: building and registering a timer on every request costs CPU. */
    private final Map<String, Timer> timers = new ConcurrentHashMap<>();
    private final Map<String, Counter> notEnoughReplicas = new ConcurrentHashMap<>();

    public ClientRequestMetrics(MeterRegistry meters) {
        this.meters = meters;
    }

    @Override
    public int getOrder() {
        return Ordered.HIGHEST_PRECEDENCE;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        String operation = operation(exchange.getRequest().getMethod(), exchange.getRequest().getPath().value());
        if (operation == null) {
            return chain.filter(exchange);
        }
        Timer.Sample sample = Timer.start(meters);
        return chain.filter(exchange).doFinally(signal -> {
            HttpStatusCode status = exchange.getResponse().getStatusCode();
            String code = status == null ? "200" : String.valueOf(status.value());
            sample.stop(timers.computeIfAbsent(operation + '/' + code, ignored -> Timer.builder("ringkv.client.requests")
                    .description("Public API requests this node coordinated")
                    .tags("operation", operation, "status", code)
                    .publishPercentileHistogram()
                    .register(meters)));
            if (status != null && status.value() == 504) {
                notEnoughReplicas.computeIfAbsent(operation, ignored -> Counter.builder("ringkv.client.not.enough.replicas")
                        .description("Requests answered 504: fewer than ack replicas answered in time")
                        .tag("operation", operation)
                        .register(meters))
                        .increment();
            }
        });
    }

    /** The operation of a public API request, or null for anything else. */
    static String operation(HttpMethod method, String path) {
        return switch (path) {
            case "/v0/entity" -> method.name().toLowerCase();
            case "/v0/entities" -> "range";
            case "/v0/status" -> "status";
            default -> path.startsWith("/v0/") ? "unknown" : null;
        };
    }
}
