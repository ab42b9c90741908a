package io.ringkv.config;

import java.io.UncheckedIOException;
import java.net.URI;
import java.time.Duration;
import java.util.function.Supplier;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.micrometer.core.instrument.MeterRegistry;
import io.ringkv.repair.AntiEntropy;
import io.ringkv.repair.DataMovement;
import io.ringkv.repair.Hints;
import io.ringkv.repair.RangeSync;
import io.ringkv.repair.RepairEndpoint;
import io.ringkv.repair.RepairLedger;
import io.ringkv.repair.Throttle;
import io.ringkv.replication.HybridClock;
import io.ringkv.replication.LocalReplica;
import io.ringkv.replication.ReplicaDirectory;
import io.ringkv.ring.ClusterMembership;
import io.ringkv.kubernetes.StatefulSetScale;
import io.ringkv.storage.RocksStore;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

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
        SettingsValidator.positive("ringkv.hints.window", hints.window().toMillis());
        SettingsValidator.positive("ringkv.hints.max-size", hints.maxSize().toBytes());
        SettingsValidator.positive("ringkv.hints.replay-rate", hints.replayRate().toBytes());
        var settings = new Hints.Settings(hints.window(), hints.maxSize().toBytes(), hints.replayRate().toBytes());
        return new Hints(store, storageScheduler, settings, replicaDirectory::remote, repairLedger,
                System::currentTimeMillis, meters);
    }

    @Bean
    RepairEndpoint repairEndpoint(AntiEntropy antiEntropy, Hints hints) {
        return new RepairEndpoint(antiEntropy, hints);
    }

    @Bean
    RangeSync rangeSync(LocalReplica localReplica, RocksStore store, Scheduler storageScheduler, HybridClock hybridClock,
            RingkvProperties properties, MeterRegistry meters) {
        long rate = properties.repair().rate().toBytes();
        SettingsValidator.positive("ringkv.repair.rate", rate);
        return new RangeSync(localReplica, store, storageScheduler, hybridClock, Throttle.of(rate), meters);
    }

    @Bean
    AntiEntropy antiEntropy(ClusterMembership membership, ReplicaDirectory replicaDirectory, RangeSync rangeSync,
            RepairLedger repairLedger, RingkvProperties properties, MeterRegistry meters) {
        Duration interval = properties.repair().interval();
        SettingsValidator.positive("ringkv.repair.interval", interval.toMillis());
        if (interval.compareTo(properties.storage().tombstoneGracePeriod().dividedBy(2)) > 0) {
            throw new InvalidSettingException("ringkv.repair.interval", "must be at most half of "
                    + "ringkv.storage.tombstone-grace-period (" + properties.storage().tombstoneGracePeriod()
                    + "), or a replica could miss a delete for longer than its tombstone is kept; got " + interval);
        }
        return new AntiEntropy(membership, replicaDirectory, rangeSync, repairLedger,
                NodeConfiguration.replicationFactor(properties), properties.repair().enabled(), interval,
                System::currentTimeMillis, meters);
    }

    @Bean
    DataMovement dataMovement(ClusterMembership membership, ReplicaDirectory replicaDirectory, RangeSync rangeSync,
            RepairLedger repairLedger, RingkvProperties properties) {
        var cluster = properties.cluster();
        var departure = cluster.departure();
        SettingsValidator.positive("ringkv.cluster.departure.timeout", departure.timeout().toMillis());
        Supplier<Mono<Boolean>> scaledAway = null;
        if (departure.statefulSet() != null && !departure.statefulSet().isBlank()) {
            // A pod's name on the ring is its stable DNS name: <pod>.<headless service>...
            String pod = URI.create(membership.self()).getHost().split("\\.", 2)[0];
            try {
                scaledAway = StatefulSetScale.inCluster(departure.statefulSet(), pod)::scaledAway;
            } catch (IllegalArgumentException | UncheckedIOException e) {
                throw new InvalidSettingException("ringkv.cluster.departure.stateful-set", e.getMessage());
            }
        }
        boolean discovered = cluster.discovery().dnsName() != null;
        // Peers see a node's state when they next probe it, once per discovery round; a static
        // ring has no rounds and nothing to wait for.
        Duration settle = discovered ? cluster.discovery().refreshInterval().multipliedBy(2) : Duration.ZERO;
        if (scaledAway != null && settle.compareTo(departure.timeout()) >= 0) {
            throw new InvalidSettingException("ringkv.cluster.departure.timeout", "must be longer than two discovery rounds ("
                    + settle + ", twice ringkv.cluster.discovery.refresh-interval), which a leaving node waits for its peers to"
                    + " see it leaving before it hands its data over; got " + departure.timeout());
        }
        SettingsValidator.notNegative("ringkv.cluster.join.owner-wait", cluster.join().ownerWait().toMillis());
        var settings = new DataMovement.Settings(NodeConfiguration.replicationFactor(properties), discovered, settle,
                Duration.ofSeconds(10), cluster.join().ownerWait(), departure.timeout());
        return new DataMovement(membership, replicaDirectory, rangeSync, repairLedger, scaledAway, settings,
                System::currentTimeMillis);
    }
}
