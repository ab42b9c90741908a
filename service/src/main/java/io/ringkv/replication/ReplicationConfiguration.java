package io.ringkv.replication;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.ringkv.health.PeerMonitors;
import io.ringkv.ledger.RepairLedger;
import io.ringkv.overload.Throttle;
import io.ringkv.paxos.Acceptor;
import io.ringkv.peer.client.PeerConnector;
import io.ringkv.record.HybridClock;
import io.ringkv.record.RecordCodec;
import io.ringkv.ring.ClusterMembership;
import io.ringkv.settings.RingkvProperties;
import io.ringkv.storage.RocksStore;
import io.ringkv.tombstones.PurgeHorizonCheck;
import reactor.core.scheduler.Scheduler;

/**
 * Replication, both sides: the coordinator with the directory of replicas it asks, and the replica
 * service that answers other coordinators on the cluster port. What peers tell in calls of their
 * own flows from the service to the directory through {@link PeerEvents}.
 */
@Configuration(proxyBeanMethods = false)
public class ReplicationConfiguration {

    @Bean
    HybridClock hybridClock(RingkvProperties properties, MeterRegistry meters) {
        HybridClock clock = HybridClock.system(properties.clock().maxOffset().toMillis());
        FunctionCounter.builder("ringkv.clock.refused", clock, HybridClock::refused)
                .description("Timestamps from other nodes refused: more than ringkv.clock.max-offset ahead of this clock")
                .register(meters);
        return clock;
    }

    @Bean
    LocalReplica localReplica(ClusterMembership membership, RocksStore store, Scheduler storageScheduler,
            RingkvProperties properties) {
        return new LocalReplica(membership.self(), store, storageScheduler, replicaWindow(properties));
    }

    @Bean
    PeerEvents peerEvents() {
        return new PeerEvents();
    }

    /** Takes snapshots for backups when {@code ringkv.backup.target} is set ({@code backup.NodeBackup}). */
    @Bean
    ReplicaService replicaService(ClusterMembership membership, RocksStore store, HybridClock hybridClock,
            RepairLedger repairLedger, Throttle transferThrottle, PurgeHorizonCheck purgeHorizonCheck,
            ObjectProvider<Snapshots> snapshots, PeerEvents peerEvents, Acceptor acceptor) {
        return new ReplicaService(membership.self(), store, hybridClock, membership, repairLedger, transferThrottle,
                purgeHorizonCheck, snapshots.getIfAvailable(() -> Snapshots.NOT_CONFIGURED), peerEvents, acceptor);
    }

    /** This node's side of the conditional requests its peers coordinate, and of those it coordinates itself. */
    @Bean
    Acceptor acceptor(RocksStore store, RingkvProperties properties) {
        return new Acceptor(store, RecordCodec.MAX_HEADER_SIZE + Math.toIntExact(properties.maxValueSize().toBytes()));
    }

    @Bean(destroyMethod = "close")
    ReplicaDirectory replicaDirectory(ClusterMembership membership, LocalReplica localReplica, PeerMonitors peerMonitors,
            PeerConnector peerConnector, RepairLedger repairLedger, PurgeHorizonCheck purgeHorizonCheck, PeerEvents peerEvents,
            RingkvProperties properties) {
        return new ReplicaDirectory(membership, localReplica, peerConnector, peerMonitors, repairLedger,
                () -> replicaWindow(properties), purgeHorizonCheck, peerEvents, properties.cluster().discovery().enabled());
    }

    @Bean
    Coordinator coordinator(ReplicaDirectory replicaDirectory, HybridClock hybridClock, HintedHandoff hints,
            RingkvProperties properties, MeterRegistry meters) {
        var replication = properties.replication();
        return new Coordinator(replicaDirectory, hybridClock, replication.timeout(), replication.readHedgeDelay(),
                replication.factor(), hints, meters);
    }

    @Bean
    InFlightReplicaCalls inFlightReplicaCalls(Coordinator coordinator, RingkvProperties properties) {
        return new InFlightReplicaCalls(coordinator, properties.replication().callBound());
    }

    /** What this node may have in flight to one replica, its own store included (ringkv.replication.window-*). */
    private static ReplicaWindow replicaWindow(RingkvProperties properties) {
        var replication = properties.replication();
        return new ReplicaWindow(replication.windowCalls(), replication.windowBytes().toBytes());
    }
}
