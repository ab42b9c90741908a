package io.ringkv.tombstones;

import java.time.Duration;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.micrometer.core.instrument.MeterRegistry;
import io.ringkv.health.BrokenLiveness;
import io.ringkv.ledger.RepairLedger;
import io.ringkv.ring.ClusterMembership;
import io.ringkv.settings.RingkvProperties;
import io.ringkv.storage.RocksStore;
import reactor.core.scheduler.Scheduler;

/** When tombstones may go, and the check that keeps a store behind its peers' purges from serving. */
@Configuration(proxyBeanMethods = false)
public class TombstoneConfiguration {

    @Bean
    PurgeHorizon purgeHorizon(ClusterMembership membership, RepairLedger repairLedger) {
        return new PurgeHorizon(membership, repairLedger, System::currentTimeMillis);
    }

    /**
     * Heard by replication on every state a peer tells, both ways (its answers to this node's
     * PINGs, and its PINGs). Liveness goes DOWN when the store fell behind its peers' purges:
     * Kubernetes restarts the pod, which clears it.
     */
    @Bean
    PurgeHorizonCheck purgeHorizonCheck(ClusterMembership membership, RepairLedger repairLedger, RingkvProperties properties,
            BrokenLiveness brokenLiveness) {
        return new PurgeHorizonCheck(membership, repairLedger, properties.cluster().discovery().enabled(), brokenLiveness::report);
    }

    /**
     * Tombstones go once their delete is older than the grace period and than the last repair with
     * every other member (so no replica that missed the delete can bring the value back); looked
     * for ten times a period.
     */
    @Bean
    TombstonePurge tombstonePurge(RocksStore store, Scheduler storageScheduler, PurgeHorizon purgeHorizon,
            RingkvProperties properties, MeterRegistry meters) {
        Duration grace = properties.storage().tombstoneGracePeriod();
        Duration every = Duration.ofMillis(Math.clamp(grace.toMillis() / 10, 1_000, 3_600_000));
        return new TombstonePurge(store, storageScheduler, every,
                () -> purgeHorizon.cutoff(System.currentTimeMillis() - grace.toMillis()), meters);
    }
}
