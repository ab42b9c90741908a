package io.ringkv.repair;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.micrometer.core.instrument.MeterRegistry;
import io.ringkv.hints.Hints;
import io.ringkv.ledger.RepairLedger;
import io.ringkv.overload.Throttle;
import io.ringkv.record.HybridClock;
import io.ringkv.replication.LocalReplica;
import io.ringkv.replication.ReplicaDirectory;
import io.ringkv.ring.ClusterMembership;
import io.ringkv.settings.RingkvProperties;
import io.ringkv.storage.RocksStore;
import reactor.core.scheduler.Scheduler;

/** Repair on a schedule and on request, and the range sync that repair, joins, leaves and cleanup stream by. */
@Configuration(proxyBeanMethods = false)
public class RepairConfiguration {

    @Bean
    RangeSync rangeSync(LocalReplica localReplica, RocksStore store, Scheduler storageScheduler, HybridClock hybridClock,
            Throttle transferThrottle, MeterRegistry meters) {
        return new RangeSync(localReplica, store, storageScheduler, hybridClock, transferThrottle, meters);
    }

    @Bean
    RepairScheduler repairScheduler(ClusterMembership membership, ReplicaDirectory replicaDirectory, RangeSync rangeSync,
            RepairLedger repairLedger, RingkvProperties properties, MeterRegistry meters) {
        var repair = properties.repair();
        return new RepairScheduler(membership, replicaDirectory, rangeSync, repairLedger, properties.replication().factor(),
                repair.enabled(), repair.interval(), System::currentTimeMillis, meters);
    }

    /** Shows the hints waiting beside the repairs: the two ways replicas catch up. */
    @Bean
    RepairEndpoint repairEndpoint(RepairScheduler repairScheduler, Hints hints) {
        return new RepairEndpoint(repairScheduler, hints::pendingByPeer);
    }
}
