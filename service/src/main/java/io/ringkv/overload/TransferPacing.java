package io.ringkv.overload;

import java.time.Duration;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.ringkv.lifecycle.PeriodicTask;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * Sets the background transfers' {@link Throttle} every second from the foreground's latency
 * ({@link RecentLatency}) through {@link AdaptiveRate}, and shows the rate as the gauge
 * {@code ringkv.transfer.rate}. With a ceiling equal to the floor the rate stays fixed and nothing
 * runs.
 */
public final class TransferPacing extends PeriodicTask {

    private static final Logger log = LoggerFactory.getLogger(TransferPacing.class);
    private static final Duration PERIOD = Duration.ofSeconds(1);

    private final Throttle throttle;
    private final RecentLatency foreground;
    private final AdaptiveRate rate;
    private final boolean adaptive;
    private final Scheduler on;

    /** {@code on} may block briefly (reading the latency waits for recordings under way). */
    public TransferPacing(Throttle throttle, RecentLatency foreground, long ceiling, double latencyFactor, Scheduler on,
            MeterRegistry meters) {
        this.throttle = throttle;
        this.foreground = foreground;
        this.rate = new AdaptiveRate(throttle.bytesPerSecond(), ceiling, latencyFactor);
        this.adaptive = ceiling > throttle.bytesPerSecond();
        this.on = on;
        Gauge.builder("ringkv.transfer.rate", throttle, Throttle::bytesPerSecond)
                .description("Bytes per second that repair, joins, leaves and cleanup may stream now")
                .baseUnit("bytes")
                .register(meters);
    }

    @Override
    protected Disposable begin() {
        if (!adaptive) {
            return null;
        }
        return everyPeriod(PERIOD, on, () -> Mono.fromRunnable(this::adjust),
                error -> log.warn("could not pace the background transfers", error)).subscribe();
    }

    void adjust() {
        throttle.setBytesPerSecond(rate.next(foreground.takeP99Millis(), throttle.takeReserved() > 0));
    }
}
