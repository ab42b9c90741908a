package io.ringkv.metrics;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.micrometer.core.instrument.MeterRegistry;
import io.ringkv.overload.RecentLatency;
import io.ringkv.storage.RocksStore;

/** Wires the metrics that no other piece registers as part of its own work: RocksDB's and the API's. */
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
}
