package io.ringkv.config;

import java.io.UncheckedIOException;
import java.net.URI;
import java.time.Duration;
import java.util.function.Supplier;

import org.springframework.boot.availability.AvailabilityChangeEvent;
import org.springframework.boot.availability.LivenessState;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.micrometer.core.instrument.MeterRegistry;
import io.ringkv.repair.RepairScheduler;
import io.ringkv.repair.RangeSync;
import io.ringkv.repair.RepairEndpoint;
import io.ringkv.ledger.RepairLedger;
import io.ringkv.handover.AutomaticCleanup;
import io.ringkv.handover.Cleanup;
import io.ringkv.handover.CleanupEndpoint;
import io.ringkv.handover.DataMovement;
import io.ringkv.hints.Hints;
import io.ringkv.kubernetes.StatefulSetScale;
import io.ringkv.overload.RecentLatency;
import io.ringkv.overload.Throttle;
import io.ringkv.overload.TransferPacing;
import io.ringkv.record.HybridClock;
import io.ringkv.replication.LocalReplica;
import io.ringkv.replication.ReplicaDirectory;
import io.ringkv.replication.ReplicaService;
import io.ringkv.ring.ClusterMembership;
import io.ringkv.settings.InvalidSettingException;
import io.ringkv.storage.RocksStore;
import io.ringkv.tombstones.PurgeHorizon;
import io.ringkv.tombstones.PurgeHorizonCheck;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * How replicas converge (hints for the writes a replica missed, anti-entropy for the rest) and
 * how data moves when nodes join and leave.
 */
@Configuration(proxyBeanMethods = false)
public class RepairConfiguration {

    @Bean
    RepairLedger repairLedger(RocksStore store) {
        return new RepairLedger(store);
    }

    @Bean
    Hints hints(RocksStore store, Scheduler storageScheduler, ReplicaDirectory replicaDirectory, RepairLedger repairLedger,
            RingkvProperties properties, MeterRegistry meters) {
        var hints = properties.hints();
        var settings = new Hints.Settings(hints.window(), hints.maxSize().toBytes(), hints.replayRate().toBytes());
        return new Hints(store, storageScheduler, settings, replicaDirectory::remote, repairLedger,
                System::currentTimeMillis, meters);
    }

    @Bean
    RepairEndpoint repairEndpoint(RepairScheduler repairScheduler, Hints hints) {
        return new RepairEndpoint(repairScheduler, hints::pendingByPeer);
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

    @Bean
    RangeSync rangeSync(LocalReplica localReplica, RocksStore store, Scheduler storageScheduler, HybridClock hybridClock,
            Throttle transferThrottle, MeterRegistry meters) {
        return new RangeSync(localReplica, store, storageScheduler, hybridClock, transferThrottle, meters);
    }

    /** What repair, joins, leaves and cleanup stream by: ringkv.repair.rate, then as the pacing sets it. */
    @Bean
    Throttle transferThrottle(RingkvProperties properties) {
        var repair = properties.repair();
        if (repair.maxRate().compareTo(repair.rate()) < 0) {
            throw new InvalidSettingException(RingkvProperties.Repair.MAX_RATE,
                    "must be at least ringkv.repair.rate (" + repair.rate() + "), got " + repair.maxRate());
        }
        return Throttle.of(repair.rate().toBytes());
    }

    /** On bounded-elastic: reading the latency may wait, and a full storage queue must not stop the pacing. */
    @Bean
    TransferPacing transferPacing(Throttle transferThrottle, RecentLatency foregroundLatency, RingkvProperties properties,
            MeterRegistry meters) {
        var repair = properties.repair();
        return new TransferPacing(transferThrottle, foregroundLatency, repair.maxRate().toBytes(), repair.latencyFactor(),
                Schedulers.boundedElastic(), meters);
    }

    @Bean
    RepairScheduler repairScheduler(ClusterMembership membership, ReplicaDirectory replicaDirectory, RangeSync rangeSync,
            RepairLedger repairLedger, RingkvProperties properties, MeterRegistry meters) {
        var repair = properties.repair();
        return new RepairScheduler(membership, replicaDirectory, rangeSync, repairLedger, properties.replication().factor(),
                repair.enabled(), repair.interval(), System::currentTimeMillis, meters);
    }

    @Bean
    PurgeHorizon purgeHorizon(ClusterMembership membership, RepairLedger repairLedger) {
        return new PurgeHorizon(membership, repairLedger, System::currentTimeMillis);
    }

    /** Liveness goes DOWN when the store fell behind its peers' purges: Kubernetes restarts the pod, which clears it. */
    @Bean
    PurgeHorizonCheck purgeHorizonCheck(ClusterMembership membership, RepairLedger repairLedger,
            ReplicaDirectory replicaDirectory, ReplicaService replicaService, RingkvProperties properties,
            BrokenLiveness brokenLiveness) {
        var check = new PurgeHorizonCheck(membership, repairLedger, properties.cluster().discovery().enabled(),
                brokenLiveness::report);
        // Both ways a peer's horizon arrives: its answers to this node's PINGs, and its PINGs.
        replicaDirectory.onStatus(check::observe);
        replicaService.onPeerStatus(check::observe);
        // And the same decision from this side, before a peer's state is heard.
        replicaDirectory.vetStates(check::stateToHear);
        replicaService.withholdWhile(check::fellBehind);
        return check;
    }

    @Bean
    BrokenLiveness brokenLiveness(ApplicationEventPublisher events) {
        return new BrokenLiveness(events);
    }

    /**
     * Liveness BROKEN that stays broken. Spring Boot declares liveness CORRECT once the application
     * has started: a peer's PING can find the store behind before that (the peer server answers
     * first), and the restart that clears it must still come. So it is said again once ready.
     */
    static final class BrokenLiveness implements ApplicationListener<ApplicationReadyEvent> {
        private final ApplicationEventPublisher events;
        private volatile boolean broken;

        BrokenLiveness(ApplicationEventPublisher events) {
            this.events = events;
        }

        void report() {
            broken = true;
            AvailabilityChangeEvent.publish(events, this, LivenessState.BROKEN);
        }

        @Override
        public void onApplicationEvent(ApplicationReadyEvent event) {
            if (broken) {
                AvailabilityChangeEvent.publish(events, this, LivenessState.BROKEN);
            }
        }
    }

    @Bean
    DataMovement dataMovement(ClusterMembership membership, ReplicaDirectory replicaDirectory, RangeSync rangeSync,
            RepairLedger repairLedger, RingkvProperties properties) {
        var cluster = properties.cluster();
        var departure = cluster.departure();
        Supplier<Mono<Boolean>> scaledAway = null;
        if (departure.leavesWithData()) {
            // A pod's name on the ring is its stable DNS name: <pod>.<headless service>...
            String pod = URI.create(membership.self()).getHost().split("\\.", 2)[0];
            try {
                scaledAway = StatefulSetScale.inCluster(departure.statefulSet(), pod)::scaledAway;
            } catch (IllegalArgumentException | UncheckedIOException e) {
                throw new InvalidSettingException(RingkvProperties.Departure.STATEFUL_SET, e.getMessage());
            }
        }
        var settings = new DataMovement.Settings(properties.replication().factor(), cluster.departureSettle(),
                Duration.ofSeconds(10), cluster.join().ownerWait(), departure.timeout(), properties.replication().callBound());
        return new DataMovement(membership, replicaDirectory, rangeSync, repairLedger, scaledAway, settings,
                System::currentTimeMillis);
    }
}
