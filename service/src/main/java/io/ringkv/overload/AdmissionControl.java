package io.ringkv.overload;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;

import org.springframework.core.Ordered;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.ringkv.replication.InternalApi;
import reactor.core.publisher.Mono;

/**
 * Bounds the requests a node works on at once, so that a burst beyond what it can serve gets a
 * quick 503 with Retry-After instead of queueing until the heap runs out. Client requests and
 * replica calls from peers are bounded apart: a flood of clients cannot starve replication,
 * which every client request of the other nodes depends on. Actuator is not bounded, so health
 * and metrics stay readable under overload.
 */
public final class AdmissionControl implements WebFilter, Ordered {

    private static final byte[] OVERLOADED = "Service Unavailable: the node is overloaded, retry later".getBytes(StandardCharsets.UTF_8);

    private final Bound clients;
    private final Bound replicas;

    public AdmissionControl(int maxClientRequests, int maxReplicaRequests, MeterRegistry meters) {
        this.clients = new Bound("client", maxClientRequests, meters);
        this.replicas = new Bound("replica", maxReplicaRequests, meters);
    }

    @Override
    public int getOrder() {
        // Before any other work is spent on a request that will be refused.
        return Ordered.HIGHEST_PRECEDENCE + 10;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        String path = exchange.getRequest().getPath().value();
        Bound bound = path.startsWith(InternalApi.PREFIX) ? replicas : path.startsWith("/v0/") ? clients : null;
        if (bound == null) {
            return chain.filter(exchange);
        }
        if (!bound.tryEnter()) {
            var response = exchange.getResponse();
            response.setStatusCode(HttpStatus.SERVICE_UNAVAILABLE);
            response.getHeaders().set(HttpHeaders.RETRY_AFTER, "1");
            response.getHeaders().setContentType(MediaType.TEXT_PLAIN);
            return response.writeWith(Mono.fromSupplier(() -> response.bufferFactory().wrap(OVERLOADED)));
        }
        return chain.filter(exchange).doFinally(signal -> bound.leave());
    }

    private static final class Bound {
        private final int limit;
        private final AtomicInteger inFlight = new AtomicInteger();

        Bound(String kind, int limit, MeterRegistry meters) {
            this.limit = limit;
            Gauge.builder("ringkv." + kind + ".requests.inflight", inFlight, AtomicInteger::get)
                    .description("Requests of this kind the node is working on")
                    .register(meters);
            Gauge.builder("ringkv." + kind + ".requests.limit", () -> limit)
                    .description("Requests of this kind the node works on at most")
                    .register(meters);
        }

        boolean tryEnter() {
            if (inFlight.incrementAndGet() > limit) {
                inFlight.decrementAndGet();
                return false;
            }
            return true;
        }

        void leave() {
            inFlight.decrementAndGet();
        }
    }
}
