package io.ringkv.conditional;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.micrometer.core.instrument.MeterRegistry;
import io.ringkv.paxos.Acceptor;
import io.ringkv.record.HybridClock;
import io.ringkv.settings.RingkvProperties;
import reactor.core.scheduler.Scheduler;

/** Conditional requests: the coordinator of their rounds of consensus ({@code io.ringkv.paxos} is the replicas' side). */
@Configuration(proxyBeanMethods = false)
public class ConditionalConfiguration {

    @Bean
    ConditionalCoordinator conditionalCoordinator(Acceptor acceptor, Scheduler storageScheduler, HybridClock hybridClock,
            RingkvProperties properties, MeterRegistry meters) {
        var replication = properties.replication();
        PaxosReplicas replicas = new PaxosReplicas(acceptor, storageScheduler);
        return new ConditionalCoordinator(replicas, hybridClock, replication.timeout(), replication.conditionalTimeout(), meters);
    }
}
