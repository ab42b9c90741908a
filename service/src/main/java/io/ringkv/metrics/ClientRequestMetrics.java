package io.ringkv.metrics;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

/**
 * Times every public API request by operation and status ({@code ringkv.client.requests}, as a
 * histogram, from which Prometheus computes any percentile across nodes), and counts the requests
 * that failed for want of replicas ({@code ringkv.client.not.enough.replicas}). The routes say
 * which operation a request is and report it when its exchange is over, refused ones included.
 */
public final class ClientRequestMetrics {

    private final MeterRegistry meters;
    /** Looked up once per operation and status: building and registering a timer on every request costs CPU. */
    private final Map<String, Timer> timers = new ConcurrentHashMap<>();
    private final Map<String, Counter> notEnoughReplicas = new ConcurrentHashMap<>();

    public ClientRequestMetrics(MeterRegistry meters) {
        this.meters = meters;
    }

    public void record(String operation, int status, long nanos) {
        String code = String.valueOf(status);
        timers.computeIfAbsent(operation + '/' + code, ignored -> Timer.builder("ringkv.client.requests")
                        .description("Public API requests this node coordinated")
                        .tags("operation", operation, "status", code)
                        .publishPercentileHistogram()
                        .register(meters))
                .record(nanos, TimeUnit.NANOSECONDS);
        if (status == 504) {
            notEnoughReplicas.computeIfAbsent(operation, ignored -> Counter.builder("ringkv.client.not.enough.replicas")
                            .description("Requests answered 504: fewer than ack replicas answered in time")
                            .tag("operation", operation)
                            .register(meters))
                    .increment();
        }
    }
}
