package io.ringkv.config;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;

/**
 * Every {@code ringkv.*} setting, bound by Spring Boot's relaxed binding: {@code --ringkv.data-dir}
 * and {@code RINGKV_DATA_DIR} are the same setting. {@link SettingsValidator} checks them at start.
 *
 * @param dataDir       where RocksDB keeps this node's data
 * @param maxValueSize  the largest value a PUT may carry
 * @param cluster       who the node is and who its peers are
 * @param replication   how the coordinator talks to replicas
 * @param storage       RocksDB tuning
 */
@ConfigurationProperties("ringkv")
public record RingkvProperties(
        @DefaultValue("./data") Path dataDir,
        @DefaultValue("4MB") DataSize maxValueSize,
        @DefaultValue Cluster cluster,
        @DefaultValue Replication replication,
        @DefaultValue Storage storage) {

    /**
     * @param self   this node's URL, which is also its name on the ring; default http://127.0.0.1:{server.port}
     * @param peers  every member's URL, this node's included; empty: a cluster of this node alone
     * @param secret shared by the members and required on the internal endpoints when set
     * @param vnodes points each member takes on the hash ring
     */
    public record Cluster(URI self, @DefaultValue List<URI> peers, String secret, @DefaultValue("256") int vnodes) {
    }

    /**
     * @param timeout       how long a coordinator waits for {@code ack} replicas before answering 504
     * @param maxConnections pooled keep-alive connections to each peer
     */
    public record Replication(@DefaultValue("1s") Duration timeout, @DefaultValue("64") int maxConnections) {
    }

    /**
     * @param tombstoneGracePeriod how long a delete's tombstone is kept before compaction may drop it
     * @param blockCacheSize       RocksDB's block cache, off the JVM heap
     * @param syncWrites           fsync the write-ahead log on every write (slower; survives power loss)
     * @param threads              threads that run RocksDB calls off the event loop
     * @param queueSize            storage calls that may wait for a thread before new ones are refused with 503
     */
    public record Storage(
            @DefaultValue("24h") Duration tombstoneGracePeriod,
            @DefaultValue("32MB") DataSize blockCacheSize,
            @DefaultValue("false") boolean syncWrites,
            @DefaultValue("8") int threads,
            @DefaultValue("10000") int queueSize) {
    }
}
