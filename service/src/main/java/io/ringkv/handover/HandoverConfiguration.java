package io.ringkv.handover;

import java.time.Duration;
import java.util.function.Supplier;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.ringkv.kubernetes.StatefulSetScale;
import io.ringkv.ledger.RepairLedger;
import io.ringkv.repair.RangeSync;
import io.ringkv.replication.ReplicaDirectory;
import io.ringkv.ring.ClusterMembership;
import io.ringkv.settings.RingkvProperties;
import io.ringkv.storage.RocksStore;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/** How data moves when nodes join and leave, and the cleanup of ranges a node no longer owns. */
@Configuration(proxyBeanMethods = false)
public class HandoverConfiguration {

    @Bean
    DataMovement dataMovement(ClusterMembership membership, ReplicaDirectory replicaDirectory, RangeSync rangeSync,
            RepairLedger repairLedger, RingkvProperties properties) {
        var cluster = properties.cluster();
        var departure = cluster.departure();
        Supplier<Mono<Boolean>> scaledAway = null;
        if (departure.leavesWithData()) {
            scaledAway = StatefulSetScale.ofMember(RingkvProperties.Departure.STATEFUL_SET, departure.statefulSet(),
                    membership.self())::scaledAway;
        }
        var settings = new DataMovement.Settings(properties.replication().factor(), cluster.departureSettle(),
                cluster.zoneMoveSettle(), Duration.ofSeconds(10), cluster.join().ownerWait(), departure.timeout(),
                properties.replication().callBound());
        return new DataMovement(membership, replicaDirectory, rangeSync, repairLedger, scaledAway, settings,
                System::currentTimeMillis);
    }

    @Bean
    Cleanup cleanup(RocksStore store, Scheduler storageScheduler, ClusterMembership membership, RingkvProperties properties,
            RangeSync rangeSync, ReplicaDirectory replicaDirectory) {
        return new Cleanup(store, storageScheduler, membership, properties.replication().factor(), rangeSync, replicaDirectory::remote);
    }

    @Bean
    CleanupEndpoint cleanupEndpoint(Cleanup cleanup) {
        return new CleanupEndpoint(cleanup);
    }

    @Bean
    AutomaticCleanup automaticCleanup(Cleanup cleanup, ClusterMembership membership, RingkvProperties properties) {
        return new AutomaticCleanup(cleanup, membership, properties.cleanup().settle(), System::currentTimeMillis);
    }
}
