package io.ringkv.metrics;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.micrometer.core.instrument.MeterRegistry;
import io.ringkv.health.PeerMonitors;
import io.ringkv.overload.RecentLatency;
import io.ringkv.ring.ClusterMembership;
import io.ringkv.settings.RingkvProperties;
import io.ringkv.storage.RocksStore;

/** Wires the metrics that no other piece registers as part of its own work: RocksDB's, the API's and the zones'. */
@Configuration(proxyBeanMethods = false)
public class MetricsConfiguration {

    @Bean
    StorageMetrics storageMetrics(RocksStore store) {
        return new StorageMetrics(store);
    }

    @Bean
    ClientRequestMetrics clientRequestMetrics(MeterRegistry meters, RecentLatency foregroundLatency) {
        return new ClientRequestMetrics(meters, foregroundLatency::record);
    }

    @Bean
    ZoneMetrics zoneMetrics(ClusterMembership membership, PeerMonitors peerMonitors, RingkvProperties properties) {
        return new ZoneMetrics(membership, peerMonitors, properties.replication().factor());
    }
}
