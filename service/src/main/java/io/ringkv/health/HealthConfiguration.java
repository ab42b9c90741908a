package io.ringkv.health;

import org.springframework.boot.health.actuate.endpoint.HealthDescriptor;
import org.springframework.boot.health.actuate.endpoint.HealthEndpoint;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.micrometer.core.instrument.MeterRegistry;
import io.ringkv.settings.RingkvProperties;
import io.ringkv.ring.ClusterMembership;
import io.ringkv.storage.RocksStore;

/**
 * Wires how a node judges its peers and itself: a circuit breaker per peer, the {@code ring}
 * and {@code storage} health contributors, the readiness that {@code GET /v0/status} answers by,
 * and the liveness that asks for a restart.
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

    /**
     * What {@code GET /v0/status} answers by: the readiness probe's own group, so that the two
     * cannot disagree (the primary group where probes are off).
     */
    @Bean
    Readiness readiness(HealthEndpoint health) {
        return new Readiness(() -> {
            HealthDescriptor readiness = health.healthForPath("readiness");
            return readiness != null ? readiness : health.health();
        });
    }

    /** What a node reports when it must be restarted; said again once ready. */
    @Bean
    BrokenLiveness brokenLiveness(ApplicationEventPublisher events) {
        return new BrokenLiveness(events);
    }

    /** Contributes as {@code storage}. */
    @Bean
    StorageHealthIndicator storageHealthIndicator(RocksStore store, RingkvProperties properties) {
        return new StorageHealthIndicator(store, properties.dataDir(), properties.storage().minFreeDisk());
    }
}
