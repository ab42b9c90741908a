package io.ringkv.metrics;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.LongConsumer;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

/**
 * Times every public API request by operation and status ({@code ringkv.client.requests}, as a
 * histogram, from which Prometheus computes any percentile across nodes), and counts the requests
 * that failed for want of replicas ({@code ringkv.client.not.enough.replicas}). The routes say
 * which operation a request is and report it when its exchange is over, refused ones included.
 * The single-key operations' durations also go to {@code foreground}, the latency that background
 * transfers are paced by (a range's takes as long as its client reads).
 */
public final class ClientRequestMetrics {

    private static final Set<String> SINGLE_KEY = Set.of("get", "put", "delete");

    private final MeterRegistry meters;
    private final LongConsumer foreground;
    /** Looked up once per operation and status: building and registering a timer on every request costs CPU. */
    private final Map<String, Timer> timers = new ConcurrentHashMap<>();
    private final Map<String, Counter> notEnoughReplicas = new ConcurrentHashMap<>();

    public ClientRequestMetrics(MeterRegistry meters, LongConsumer foreground) {
        this.meters = meters;
        this.foreground = foreground;
    }

    public void record(String operation, int status, long nanos) {
        if (SINGLE_KEY.contains(operation)) {
            foreground.accept(nanos);
        }
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
