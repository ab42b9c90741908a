package io.ringkv.config;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.micrometer.core.instrument.MeterRegistry;
import io.ringkv.health.BreakerSettings;
import io.ringkv.health.PeerMonitors;
import io.ringkv.health.RingHealthIndicator;
import io.ringkv.health.StorageHealthIndicator;
import io.ringkv.ring.ClusterMembership;
import io.ringkv.storage.RocksStore;

/**
 * Wires how a node judges its peers and itself: a circuit breaker per peer, and the {@code ring}
 * and {@code storage} health contributors.
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
}
