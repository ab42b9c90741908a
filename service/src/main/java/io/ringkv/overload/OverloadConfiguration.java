package io.ringkv.overload;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.micrometer.core.instrument.MeterRegistry;
import io.ringkv.settings.InvalidSettingException;
import io.ringkv.settings.RingkvProperties;
import reactor.core.scheduler.Schedulers;

/**
 * The bounds on a node's work: the public API's requests and bytes of values in progress at once,
 * and the rate of background transfers, paced by the client requests' latency.
 */
@Configuration(proxyBeanMethods = false)
public class OverloadConfiguration {

    @Bean
    AdmissionControl admissionControl(RingkvProperties properties, MeterRegistry meters) {
        var overload = properties.overload();
        return new AdmissionControl(overload.maxClientRequests(), overload.maxBytesInFlight().toBytes(), meters);
    }

    /** The client requests' latency, second by second, that background transfers are paced by. */
    @Bean
    RecentLatency foregroundLatency() {
        return new RecentLatency();
    }

    /** What repair, joins, leaves and cleanup stream by: ringkv.repair.rate, then as the pacing sets it. */
    @Bean
    Throttle transferThrottle(RingkvProperties properties) {
        var repair = properties.repair();
        if (repair.maxRate().compareTo(repair.rate()) < 0) {
            throw new InvalidSettingException(RingkvProperties.Repair.MAX_RATE,
                    "must be at least ringkv.repair.rate (" + repair.rate() + "), got " + repair.maxRate());
        }
        return Throttle.of(repair.rate().toBytes());
    }

    /** On bounded-elastic: reading the latency may wait, and a full storage queue must not stop the pacing. */
    @Bean
    TransferPacing transferPacing(Throttle transferThrottle, RecentLatency foregroundLatency, RingkvProperties properties,
            MeterRegistry meters) {
        var repair = properties.repair();
        return new TransferPacing(transferThrottle, foregroundLatency, repair.maxRate().toBytes(), repair.latencyFactor(),
                Schedulers.boundedElastic(), meters);
    }
}
