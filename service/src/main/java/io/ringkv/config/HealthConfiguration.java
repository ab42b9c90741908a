package io.ringkv.config;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.micrometer.core.instrument.MeterRegistry;
import io.ringkv.health.BreakerSettings;
import io.ringkv.health.PeerMonitors;
import io.ringkv.health.RingHealthIndicator;
import io.ringkv.health.StorageHealthIndicator;
import io.ringkv.metrics.ClientRequestMetrics;
import io.ringkv.metrics.StorageMetrics;
import io.ringkv.overload.AdmissionControl;
import io.ringkv.ring.ClusterMembership;
import io.ringkv.storage.RocksStore;

/**
 * Wires what keeps a node healthy and observable: a circuit breaker per peer, the {@code ring} and
 * {@code storage} health contributors, the metrics, and the admission bounds.
 */
@Configuration(proxyBeanMethods = false)
public class HealthConfiguration {

    @Bean
    PeerMonitors peerMonitors(RingkvProperties properties, MeterRegistry meters) {
        var breaker = properties.health().breaker();
        SettingsValidator.positive("ringkv.health.breaker.window-size", breaker.windowSize());
        SettingsValidator.positive("ringkv.health.breaker.minimum-calls", breaker.minimumCalls());
        SettingsValidator.percentage("ringkv.health.breaker.failure-rate", breaker.failureRate());
        SettingsValidator.percentage("ringkv.health.breaker.slow-call-rate", breaker.slowCallRate());
        SettingsValidator.positive("ringkv.health.breaker.slow-call-threshold", breaker.slowCallThreshold().toMillis());
        SettingsValidator.positive("ringkv.health.breaker.open-for", breaker.openFor().toMillis());
        SettingsValidator.positive("ringkv.health.breaker.probe-calls", breaker.probeCalls());
        return new PeerMonitors(new BreakerSettings(breaker.windowSize(), breaker.minimumCalls(), breaker.failureRate(),
                breaker.slowCallThreshold(), breaker.slowCallRate(), breaker.openFor(), breaker.probeCalls()), meters);
    }

    /** Contributes as {@code ring}. */
    @Bean
    RingHealthIndicator ringHealthIndicator(ClusterMembership membership, PeerMonitors peerMonitors) {
        return new RingHealthIndicator(membership, peerMonitors);
    }

    /** Contributes as {@code storage}. */
    @Bean
    StorageHealthIndicator storageHealthIndicator(RocksStore store, RingkvProperties properties) {
        return new StorageHealthIndicator(store, properties.dataDir(), properties.storage().minFreeDisk());
    }

    @Bean
    StorageMetrics storageMetrics(RocksStore store) {
        return new StorageMetrics(store);
    }

    @Bean
    ClientRequestMetrics clientRequestMetrics(MeterRegistry meters) {
        return new ClientRequestMetrics(meters);
    }

    @Bean
    AdmissionControl admissionControl(RingkvProperties properties, MeterRegistry meters) {
        var overload = properties.overload();
        SettingsValidator.positive("ringkv.overload.max-client-requests", overload.maxClientRequests());
        // Checked here, beside the bound it goes with: the API takes a slot once a body has arrived.
        SettingsValidator.positive("ringkv.overload.body-timeout", overload.bodyTimeout().toMillis());
        long maxBytes = overload.maxBytesInFlight().toBytes();
        if (maxBytes < properties.maxValueSize().toBytes()) {
            throw new InvalidSettingException("ringkv.overload.max-bytes-in-flight", maxBytes
                    + " bytes is less than ringkv.max-value-size (" + properties.maxValueSize().toBytes() + "): no value that large could ever be written");
        }
        return new AdmissionControl(overload.maxClientRequests(), maxBytes, meters);
    }
}
