package io.ringkv.backup;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.micrometer.core.instrument.MeterRegistry;
import io.ringkv.settings.RingkvProperties;
import io.ringkv.overload.Throttle;
import io.ringkv.replication.ReplicaDirectory;
import io.ringkv.ring.ClusterMembership;
import io.ringkv.storage.RocksStore;
import reactor.core.scheduler.Schedulers;

/**
 * Backups and restores ({@code io.ringkv.backup}): present only with {@code ringkv.backup.target};
 * without it the endpoints answer that no backup store is configured.
 */
@Configuration(proxyBeanMethods = false)
public class BackupConfiguration {

    private static final String TARGET = "ringkv.backup.target";
    /** How long a member may take to say its snapshot is taken: a memtable flush under load, and the links. */
    private static final Duration SNAPSHOT_TIMEOUT = Duration.ofSeconds(60);

    @Bean(destroyMethod = "close")
    @ConditionalOnProperty(TARGET)
    BackupStore backupStore(RingkvProperties properties) {
        var backup = properties.backup();
        URI target = backup.target();
        return "file".equals(target.getScheme()) ? new DirectoryBackupStore(Path.of(target))
                : S3BackupStore.open(target, backup.endpoint(), backup.region());
    }

    @Bean
    BackupMetrics backupMetrics(MeterRegistry meters) {
        return new BackupMetrics(meters);
    }

    /** Also what takes this node's snapshot when a peer coordinates a backup ({@code replication.Snapshots}). */
    @Bean(destroyMethod = "close")
    @ConditionalOnProperty(TARGET)
    NodeBackup nodeBackup(RocksStore store, ClusterMembership membership, BackupStore backupStore, RingkvProperties properties,
            BackupMetrics backupMetrics, ObjectProvider<ClusterBackup> clusterBackup) {
        var backup = properties.backup();
        return new NodeBackup(store, membership.self(), () -> membership.ring().names(), backupStore,
                backup.stagingIn(properties.dataDir()), Throttle.of(backup.rate().toBytes()), System::currentTimeMillis,
                id -> clusterBackup.getObject().finished(id), backupMetrics);
    }

    @Bean
    @ConditionalOnProperty(TARGET)
    ClusterBackup clusterBackup(ClusterMembership membership, ReplicaDirectory replicaDirectory, NodeBackup nodeBackup,
            BackupStore backupStore, RingkvProperties properties) {
        return new ClusterBackup(membership.self(), () -> membership.ring().names(), replicaDirectory::remote, nodeBackup,
                backupStore, properties.backup().keep(), SNAPSHOT_TIMEOUT, System::currentTimeMillis);
    }

    @Bean(destroyMethod = "close")
    @ConditionalOnProperty(TARGET)
    Restore restore(ClusterBackup clusterBackup, BackupStore backupStore, ReplicaDirectory replicaDirectory,
            RingkvProperties properties, BackupMetrics backupMetrics) {
        return new Restore(clusterBackup, backupStore, properties.backup().stagingIn(properties.dataDir()), replicaDirectory::placement,
                properties.replication().factor(), properties.replication().timeout().multipliedBy(10), System::currentTimeMillis,
                backupMetrics);
    }

    @Bean
    BackupEndpoint backupEndpoint(ObjectProvider<ClusterBackup> clusterBackup) {
        return new BackupEndpoint(clusterBackup.getIfAvailable(), Schedulers.boundedElastic());
    }

    @Bean
    RestoreEndpoint restoreEndpoint(ObjectProvider<Restore> restore) {
        return new RestoreEndpoint(restore.getIfAvailable(), Schedulers.boundedElastic());
    }
}
