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
 * @param replication   how many replicas a key has and how the coordinator talks to them
 * @param clock         how far the nodes' clocks may disagree
 * @param hints         writes a replica missed, kept for it by the coordinator
 * @param repair        anti-entropy: replicas compared and healed in the background
 * @param storage       RocksDB tuning
 * @param health        how sick peers are detected
 * @param overload      how many requests a node works on at once
 * @param startup       what a node does before it reports ready
 * @param testing       fault injection for tests; never set in production
 */
@ConfigurationProperties("ringkv")
public record RingkvProperties(
        @DefaultValue("./data") Path dataDir,
        @DefaultValue("4MB") DataSize maxValueSize,
        @DefaultValue Cluster cluster,
        @DefaultValue Replication replication,
        @DefaultValue Clock clock,
        @DefaultValue Hints hints,
        @DefaultValue Repair repair,
        @DefaultValue Storage storage,
        @DefaultValue Health health,
        @DefaultValue Overload overload,
        @DefaultValue Startup startup,
        @DefaultValue Testing testing) {

    /**
     * @param self   this node's URL, which is also its name on the ring; default http://127.0.0.1:{server.port}
     * @param peers  every member's URL, this node's included; empty: a cluster of this node alone
     * @param secret shared by the members, who prove to each other that they know it; required with
     *               peers, unless {@code kubernetesSecret} names where to find it
     * @param kubernetesSecret a Kubernetes Secret in this pod's namespace that holds the cluster secret,
     *               created with a random one by the first node that finds it missing; used when
     *               {@code secret} is unset
     * @param port   the port peers call this node on (the node-to-node protocol); unset: a free port,
     *               which the node tells on its public port ({@code GET /v0/cluster})
     * @param vnodes points each member takes on the hash ring
     * @param discovery finding the members through DNS instead of a static peer list
     * @param departure how a node scaled away hands its data over before it goes
     * @param join      how a new node takes its ranges before it serves them
     */
    public record Cluster(URI self, @DefaultValue List<URI> peers, String secret, String kubernetesSecret, Integer port,
            @DefaultValue("256") int vnodes, @DefaultValue Discovery discovery, @DefaultValue Departure departure,
            @DefaultValue Join join) {
    }

    /**
     * @param ownerWait how long a joining node waits for a current owner it cannot pull from
     *                  before it joins without it, which it does only if the owners it did pull
     *                  from hold every write a majority acknowledged
     */
    public record Join(@DefaultValue("2m") Duration ownerWait) {
    }

    /**
     * @param statefulSet the StatefulSet this node is a pod of; set, a node told to stop reads its
     *                    {@code spec.replicas} through the Kubernetes API and, when that no longer
     *                    counts the pod, pushes its data to the next owners before it exits
     *                    (the pod needs its service account token and may {@code get} the StatefulSet)
     * @param timeout     how long that hand-over may take; keep it well under the pod's
     *                    terminationGracePeriodSeconds
     */
    public record Departure(String statefulSet, @DefaultValue("45s") Duration timeout) {
    }

    /**
     * @param dnsName         a name resolving to every member's address (a headless Service); set it instead of peers
     * @param refreshInterval how often the name is resolved and the members probed
     * @param removalAfter    consecutive rounds a member must be missing from DNS before it leaves the ring
     * @param bootstrapTimeout how long a starting node waits to reach the other members DNS lists
     *                        (all of them, or a majority) before it serves with whatever ring it has
     */
    public record Discovery(String dnsName, @DefaultValue("5s") Duration refreshInterval, @DefaultValue("3") int removalAfter,
            @DefaultValue("60s") Duration bootstrapTimeout) {
    }

    /**
     * @param factor        how many nodes hold each key (fewer if the cluster is smaller); the
     *                      default of {@code replicas=} is a majority of them. The same on every node.
     * @param timeout       how long a coordinator waits for {@code ack} replicas before answering 504
     * @param maxConnections persistent connections to each peer, each carrying many requests at once
     * @param readHedgeDelay how long a read waits for the {@code ack} replicas it asked first before
     *                       asking the others too; 0 asks all {@code from} replicas at once
     */
    public record Replication(@DefaultValue("3") int factor, @DefaultValue("1s") Duration timeout,
            @DefaultValue("2") int maxConnections, @DefaultValue("20ms") Duration readHedgeDelay) {
    }

    /**
     * @param maxOffset a timestamp from another node (a write, a read's answer) further ahead of
     *                  this node's clock is refused: one node with a clock far in the future must
     *                  not win every conflict, nor drag the other clocks along
     */
    public record Clock(@DefaultValue("500ms") Duration maxOffset) {
    }

    /**
     * @param window     how long a coordinator keeps the writes a replica missed; a replica away
     *                   longer is healed by a full repair instead
     * @param maxSize    bytes of missed writes kept per replica; past it the replica is marked for a full repair
     * @param replayRate bytes per second a node replays to a replica that came back
     */
    public record Hints(@DefaultValue("3h") Duration window, @DefaultValue("64MB") DataSize maxSize,
            @DefaultValue("4MB") DataSize replayRate) {
    }

    /**
     * @param enabled  off, a node never starts a repair (it still answers its peers' repairs); a
     *                 node with peers then never purges tombstones, which wait for a repair
     * @param interval how often a node compares the ranges it shares with each peer (Merkle-style
     *                 digests) and streams the differences; it must stay well under
     *                 storage.tombstone-grace-period, or a delete could come back
     * @param rate     bytes per second repair may stream, both directions together, so that it
     *                 never crowds out client traffic
     */
    public record Repair(@DefaultValue("true") boolean enabled, @DefaultValue("5m") Duration interval,
            @DefaultValue("8MB") DataSize rate) {
    }

    /**
     * @param tombstoneGracePeriod how long a delete's tombstone is kept before compaction may drop it
     * @param blockCacheSize       RocksDB's block cache, off the JVM heap
     * @param syncWrites           fsync the write-ahead log on every write (slower; survives power loss)
     * @param threads              threads that run RocksDB calls off the event loop
     * @param queueSize            storage calls that may wait for a thread before new ones are refused with 503
     * @param minFreeDisk          below this much free disk the node reports its storage DOWN (not ready)
     */
    public record Storage(
            @DefaultValue("24h") Duration tombstoneGracePeriod,
            @DefaultValue("32MB") DataSize blockCacheSize,
            @DefaultValue("false") boolean syncWrites,
            @DefaultValue("8") int threads,
            @DefaultValue("10000") int queueSize,
            @DefaultValue("64MB") DataSize minFreeDisk) {
    }

    /** @param breaker the circuit breaker each node keeps per peer */
    public record Health(@DefaultValue Breaker breaker) {
    }

    /**
     * A peer's breaker opens when, of its last {@code windowSize} calls (and at least
     * {@code minimumCalls}), {@code failureRate}% failed or {@code slowCallRate}% took longer than
     * {@code slowCallThreshold}; after {@code openFor} it lets {@code probeCalls} calls through.
     * The slow-call threshold defaults to the replication timeout's default: a peer that is slow
     * but answers is passed over by reads anyway, while a coordinator that is itself overloaded
     * sees every peer as slow, and a lower threshold turned that into 504s (see loadtest/BENCHMARKS.md).
     */
    public record Breaker(
            @DefaultValue("20") int windowSize,
            @DefaultValue("10") int minimumCalls,
            @DefaultValue("50") float failureRate,
            @DefaultValue("1s") Duration slowCallThreshold,
            @DefaultValue("80") float slowCallRate,
            @DefaultValue("5s") Duration openFor,
            @DefaultValue("3") int probeCalls) {
    }

    /**
     * @param maxClientRequests  public API requests a node works on at once; more get 503 at once
     * @param maxReplicaRequests replica calls from peers a node works on at once, counted apart so
     *                           that client overload cannot starve replication
     * @param bodyTimeout        how long a PUT's body may take to arrive; later, 408. A request
     *                           takes a client slot only once its body is here
     * @param maxBytesInFlight   bytes of values a node holds at once, from their arrival until
     *                           their last replica answered; more get 503 at once. Peers' writes
     *                           get a bound of the same size, apart
     */
    public record Overload(@DefaultValue("256") int maxClientRequests, @DefaultValue("1024") int maxReplicaRequests,
            @DefaultValue("10s") Duration bodyTimeout, @DefaultValue("32MB") DataSize maxBytesInFlight) {
    }

    /**
     * @param warmUpRequests reads and writes of its own (of each) a node sends itself before it
     *                       reports ready, so that live traffic does not meet a cold JIT; 0: none
     * @param warmUpTimeout  the longest the warm-up may delay readiness
     */
    public record Startup(@DefaultValue("1000") int warmUpRequests, @DefaultValue("30s") Duration warmUpTimeout) {
    }

    /** @param replicaDelay delays every answer this node gives its peers: a slow node, for tests */
    public record Testing(@DefaultValue("0ms") Duration replicaDelay) {
    }
}
