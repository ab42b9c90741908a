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
        return new AdmissionControl(overload.maxClientRequests(), overload.maxBytesInFlight().toBytes(), meters);
    }
}
