package io.ringkv.settings;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

import org.hibernate.validator.constraints.Range;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.StringUtils;
import org.springframework.util.unit.DataSize;
import org.springframework.validation.annotation.Validated;

import io.ringkv.ring.HashRing;
import io.ringkv.ring.Member;
import jakarta.validation.Valid;
import jakarta.validation.constraints.DecimalMin;
import jakarta.validation.constraints.Positive;
import jakarta.validation.constraints.PositiveOrZero;

/**
 * Every {@code ringkv.*} setting, bound by Spring Boot's relaxed binding: {@code --ringkv.data-dir}
 * and {@code RINGKV_DATA_DIR} are the same setting. Each is checked where it is declared, once at
 * start-up, so that a mistake stops the node with one line that names the setting instead of
 * surfacing later as a confusing failure: by its constraint annotation (durations and sizes by
 * {@link PositiveAmounts}) where one suffices, otherwise by the compact constructor of the record
 * that holds it and the settings it depends on. Both are reported in the same words
 * ({@link InvalidSettingFailureAnalyzer}).
 *
 * @param dataDir       where RocksDB keeps this node's data
 * @param maxValueSize  the largest value a PUT may carry
 * @param maxTtl        the longest time to live a PUT may give its value ({@code ttl}): a bound on
 *                      mistakes, such as milliseconds given for seconds
 * @param cluster       who the node is and who its peers are
 * @param replication   how many replicas a key has and how the coordinator talks to them
 * @param clock         how far the nodes' clocks may disagree
 * @param hints         writes a replica missed, kept for it by the coordinator
 * @param repair        anti-entropy: replicas compared and healed in the background
 * @param cleanup       when a node drops by itself what it keeps for ranges it no longer owns
 * @param storage       RocksDB tuning
 * @param health        how sick peers are detected
 * @param overload      how many requests a node works on at once
 * @param startup       what a node does before it reports ready
 * @param shutdown      what a node does when told to stop, before it stops taking requests
 * @param backup        where backups go, how fast, and how many are kept
 * @param eventLoops    the threads that serve the public API and the peers (never blocked); unset:
 *                      one per processor the JVM sees. Reactor Netty's own default, at least 4,
 *                      cost a 3-node cluster on 2 cores a fifth of its throughput in context
 *                      switches and idle wake-ups (loadtest/BENCHMARKS.md)
 */
@Validated
@ConfigurationProperties("ringkv")
public record RingkvProperties(
        @DefaultValue("./data") @WritableDirectory Path dataDir,
        @DefaultValue("4MB") DataSize maxValueSize,
        @DefaultValue("365d") @Positive Duration maxTtl,
        @DefaultValue @Valid Cluster cluster,
        @DefaultValue @Valid Replication replication,
        @DefaultValue @Valid Clock clock,
        @DefaultValue @Valid Hints hints,
        @DefaultValue @Valid Repair repair,
        @DefaultValue @Valid Cleanup cleanup,
        @DefaultValue @Valid Storage storage,
        @DefaultValue @Valid Health health,
        @DefaultValue @Valid Overload overload,
        @DefaultValue @Valid Startup startup,
        @DefaultValue @Valid Shutdown shutdown,
        @DefaultValue @Valid Backup backup,
        @Positive Integer eventLoops) {

    public static final String DATA_DIR = "ringkv.data-dir";

    /** Values are byte arrays, and peers frame a record whole: {@link #maxValueBytes} stays an int. */
    private static final long MAX_VALUE_SIZE_LIMIT = 256L * 1024 * 1024;

    public RingkvProperties {
        if (maxValueSize.toBytes() < 0 || maxValueSize.toBytes() > MAX_VALUE_SIZE_LIMIT) {
            throw new InvalidSettingException("ringkv.max-value-size", "must be between 0 and 256MB, got " + maxValueSize);
        }
        if (overload.maxBytesInFlight().toBytes() < maxValueSize.toBytes()) {
            throw new InvalidSettingException("ringkv.overload.max-bytes-in-flight", overload.maxBytesInFlight().toBytes()
                    + " bytes is less than ringkv.max-value-size (" + maxValueSize.toBytes()
                    + "): no value that large could ever be written");
        }
        if (repair.interval().compareTo(storage.tombstoneGracePeriod().dividedBy(2)) > 0) {
            throw new InvalidSettingException("ringkv.repair.interval", "must be at most half of "
                    + "ringkv.storage.tombstone-grace-period (" + storage.tombstoneGracePeriod()
                    + "), or a replica could miss a delete for longer than its tombstone is kept; got " + repair.interval());
        }
        Duration peersAdopt = cluster.departureSettle();
        if (cleanup.settle().isPositive() && cleanup.settle().compareTo(peersAdopt) <= 0) {
            throw new InvalidSettingException("ringkv.cleanup.settle", "must be 0 (off) or longer than two discovery rounds ("
                    + peersAdopt + ", twice ringkv.cluster.discovery.refresh-interval), which the peers may take to adopt "
                    + "a new ring; got " + cleanup.settle());
        }
    }

    /** How many event loops the node runs: {@link #eventLoops}, or one per processor. */
    public int eventLoopCount() {
        return eventLoops != null ? eventLoops : Runtime.getRuntime().availableProcessors();
    }

    /** {@link #maxValueSize} in bytes, which fit an int. */
    public int maxValueBytes() {
        return (int) maxValueSize.toBytes();
    }

    /**
     * @param self   this node's URL, which is also its name on the ring; default http://127.0.0.1:{server.port}
     * @param peers  every member's URL, this node's included; empty: a cluster of this node alone
     * @param secret shared by the members, who prove to each other that they know it; required with
     *               peers
     * @param port   the port peers call this node on (the node-to-node protocol); unset: a free port,
     *               which the node tells on its public port ({@code GET /v0/cluster})
     * @param vnodes points each member takes on the hash ring
     * @param discovery finding the members through DNS instead of a static peer list
     * @param departure how a node scaled away hands its data over before it goes
     * @param join      how a new node takes its ranges before it serves them
     * @param previousSecret the secret {@code secret} replaces, accepted too while a new one rolls
     *               out, so that old and new pods keep talking; unset once the rollout is done
     * @param zone   the zone this node runs in, told to its peers as one of its attributes; empty: none
     *               (or one of the two below)
     * @param zonesByOrdinal zones given by hand to a StatefulSet's pods, for Nodes without a zone
     *               label: the pod of ordinal {@code i} (its name, {@code <statefulset>-<i>}, begins
     *               {@link #self}'s host) is in the zone {@code i % size}; used when {@code zone} is empty
     * @param zoneFromNode the name of the Kubernetes Node this pod runs on (the downward API's
     *               {@code spec.nodeName}): the node takes its zone from that Node's
     *               {@code topology.kubernetes.io/zone} label, read once at start through the
     *               Kubernetes API (the service account needs {@code get} on {@code nodes}); used
     *               when neither {@code zone} nor {@code zonesByOrdinal} is set
     */
    public record Cluster(URI self, @DefaultValue List<URI> peers, String secret,
            @Range(max = 65535, message = PORT_RANGE) Integer port,
            @DefaultValue("" + HashRing.DEFAULT_VNODES) @Positive int vnodes, @DefaultValue @Valid Discovery discovery,
            @DefaultValue @Valid Departure departure, @DefaultValue @Valid Join join, String previousSecret,
            @DefaultValue("") String zone, @DefaultValue List<String> zonesByOrdinal, String zoneFromNode) {

        private static final String PORT_RANGE = "must be a TCP port (1-65535), or unset for a free one, got ${validatedValue}";
        private static final String SELF = "ringkv.cluster.self";
        private static final String PEERS = "ringkv.cluster.peers";
        /** A Kubernetes object name (a DNS subdomain), as Nodes are named: nothing that could leave the API path. */
        private static final Pattern OBJECT_NAME = Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
        private static final int MAX_OBJECT_NAME_LENGTH = 253;

        public static final String ZONE = "ringkv.cluster.zone";
        public static final String ZONES_BY_ORDINAL = "ringkv.cluster.zones-by-ordinal";
        public static final String ZONE_FROM_NODE = "ringkv.cluster.zone-from-node";

        public Cluster {
            if (!zone.isEmpty()) {
                requireZone(ZONE, "", zone);
            }
            zonesByOrdinal.forEach(entry -> requireZone(ZONES_BY_ORDINAL, "each zone ", entry));
            if (StringUtils.hasText(zoneFromNode)
                    && (zoneFromNode.length() > MAX_OBJECT_NAME_LENGTH || !OBJECT_NAME.matcher(zoneFromNode).matches())) {
                throw new InvalidSettingException(ZONE_FROM_NODE, "must be a Kubernetes Node's name (lower-case letters, digits,"
                        + " '-' and '.', at most " + MAX_OBJECT_NAME_LENGTH + " characters), got '" + zoneFromNode + "'");
            }
            if (self != null) {
                nodeName(SELF, self);
            }
            Set<String> names = new LinkedHashSet<>();
            for (URI peer : peers) {
                if (!names.add(nodeName(PEERS, peer))) {
                    throw new InvalidSettingException(PEERS, "'" + peer + "' is listed twice");
                }
            }
            if (self != null && !peers.isEmpty()) {
                // Checked first: a node that is not on its own list has a wrong list, secret or not.
                requireAmongPeers(nodeName(SELF, self), names);
            }
            if (discovery.enabled()) {
                if (!peers.isEmpty()) {
                    throw new InvalidSettingException("ringkv.cluster.discovery.dns-name",
                            "set either it or " + PEERS + ", not both");
                }
                // The others reach this node by its name: the default, a loopback address, reaches no one.
                String host = self == null ? "127.0.0.1" : self.getHost();
                if (host.equals("localhost") || host.startsWith("127.")) {
                    String given = self == null ? "the default http://127.0.0.1:{server.port}" : self.toString();
                    throw new InvalidSettingException(SELF, "with DNS discovery it must be this node's stable DNS name, such as "
                            + "http://ringkv-0.ringkv-headless:8080, not " + given);
                }
            }
            // Peers accept each other only on proof of the secret; a node alone needs none.
            boolean hasPeers = peers.size() > 1 || discovery.enabled();
            if (hasPeers && !StringUtils.hasText(secret)) {
                throw new InvalidSettingException("ringkv.cluster.secret",
                        "is required when the node has peers (" + PEERS + " or discovery): give every member the same one");
            }
            if (departure.leavesWithData() && departure.timeout().compareTo(settle(discovery)) <= 0) {
                throw new InvalidSettingException("ringkv.cluster.departure.timeout", "must be longer than two discovery rounds ("
                        + settle(discovery) + ", twice ringkv.cluster.discovery.refresh-interval), which a leaving node waits "
                        + "for its peers to see it leaving before it hands its data over; got " + departure.timeout());
            }
        }

        /** The port to answer peers on; 0, a free one, when {@link #port} is unset. */
        public int listenPort() {
            return port != null ? port : 0;
        }

        /** Refuses a zone that could not be a member's: {@code which} is "" or names the entry of a list. */
        private static void requireZone(String setting, String which, String zone) {
            if (!Member.validText(zone)) {
                throw new InvalidSettingException(setting, which + "must be " + Member.TEXT_FORM + ", got '" + zone + "'");
            }
        }

        /** This node's name on the ring: {@link #self}, by default the loopback URL of the public port. */
        public String selfName(int serverPort) {
            return nodeName(SELF, self != null ? self : URI.create("http://127.0.0.1:" + serverPort));
        }

        /** The members' names, this node's among them; with no peers given, a cluster of this node alone. */
        public List<String> members(String selfName) {
            if (peers.isEmpty()) {
                return List.of(selfName);
            }
            List<String> names = peers.stream().map(peer -> nodeName(PEERS, peer)).toList();
            requireAmongPeers(selfName, names);
            return names;
        }

        private static void requireAmongPeers(String selfName, Collection<String> names) {
            if (!names.contains(selfName)) {
                throw new InvalidSettingException(SELF, selfName + " is not among " + PEERS + " " + names);
            }
        }

        /**
         * How long a joining or leaving node waits for its peers to see it before it moves data:
         * with DNS discovery they put a new member on their rings, and see a node's state, when
         * they next probe it, once per round. A static list's members are on every ring from the
         * start, so writes reach one that joins without a wait, and none leaves.
         */
        public Duration departureSettle() {
            return settle(discovery);
        }

        /**
         * How long a node moving to another zone waits for its peers to see each step before it
         * moves data: they learn a member's zone only as they next ping it, once per round, with a
         * static list too (its states they hear at once, but a ping that failed is a round late).
         */
        public Duration zoneMoveSettle() {
            return discovery.refreshInterval().multipliedBy(2);
        }

        private static Duration settle(Discovery discovery) {
            return discovery.enabled() ? discovery.refreshInterval().multipliedBy(2) : Duration.ZERO;
        }

        /** A URL reduced to {@code scheme://host:port}, the form of a node's name on the ring. */
        private static String nodeName(String setting, URI url) {
            String scheme = url.getScheme();
            if (scheme == null || !(scheme.equals("http") || scheme.equals("https"))) {
                throw new InvalidSettingException(setting, "'" + url + "' is not an http:// or https:// URL");
            }
            if (url.getHost() == null) {
                throw new InvalidSettingException(setting, "'" + url + "' has no host name");
            }
            boolean bare = (url.getRawPath() == null || url.getRawPath().isEmpty() || url.getRawPath().equals("/"))
                    && url.getRawQuery() == null && url.getRawFragment() == null && url.getRawUserInfo() == null;
            if (!bare) {
                throw new InvalidSettingException(setting,
                        "'" + url + "' must be only scheme, host and port, such as http://10.0.0.1:8080");
            }
            int port = url.getPort() >= 0 ? url.getPort() : scheme.equals("https") ? 443 : 80;
            return scheme + "://" + url.getHost() + ":" + port;
        }
    }

    /**
     * @param ownerWait how long a joining node waits for a current owner it cannot pull from
     *                  before it joins without it, which it does only if the owners it did pull
     *                  from hold every write a majority acknowledged
     */
    public record Join(@DefaultValue("2m") @PositiveOrZero Duration ownerWait) {
    }

    /**
     * @param statefulSet the StatefulSet this node is a pod of; set, a node told to stop reads its
     *                    {@code spec.replicas} through the Kubernetes API and, when that no longer
     *                    counts the pod, pushes its data to the next owners before it exits
     *                    (the pod needs its service account token and may {@code get} the StatefulSet)
     * @param timeout     how long that hand-over may take; keep it well under the pod's
     *                    terminationGracePeriodSeconds
     */
    public record Departure(String statefulSet, @DefaultValue("45s") @Positive Duration timeout) {

        public static final String STATEFUL_SET = "ringkv.cluster.departure.stateful-set";

        /** Whether a node told to stop looks for a scale-down, and then hands its data over. */
        public boolean leavesWithData() {
            return StringUtils.hasText(statefulSet);
        }
    }

    /**
     * @param dnsName         a name resolving to every member's address (a headless Service); set it instead of peers
     * @param refreshInterval how often the name is resolved and the members probed; with a static
     *                        peer list, how often the members tell each other their states
     * @param removalAfter    consecutive rounds a member must be missing from DNS before it leaves the ring
     * @param bootstrapTimeout how long a starting node waits to reach the other members DNS lists
     *                        (all of them, or a majority) before it serves with whatever ring it has
     * @param statefulSet     the StatefulSet this node is a pod of; set, its {@code spec.replicas}
     *                        (read each round through the Kubernetes API) decides the members: its
     *                        pods {@code 0..replicas-1}, up or down, Pending or not in DNS. Only a
     *                        scale-down takes one off the ring. Unset, the ring follows who answers
     */
    public record Discovery(String dnsName, @DefaultValue("5s") @Positive Duration refreshInterval,
            @DefaultValue("3") @Positive int removalAfter, @DefaultValue("60s") @Positive Duration bootstrapTimeout,
            String statefulSet) {

        public static final String STATEFUL_SET = "ringkv.cluster.discovery.stateful-set";

        public Discovery {
            if (StringUtils.hasText(statefulSet) && !StringUtils.hasText(dnsName)) {
                throw new InvalidSettingException(STATEFUL_SET, "needs ringkv.cluster.discovery.dns-name: the members of a"
                        + " StatefulSet find each other through its headless Service");
            }
        }

        /** Whether the members are found through DNS rather than listed. */
        public boolean enabled() {
            return StringUtils.hasText(dnsName);
        }

        /** Whether a StatefulSet's spec.replicas decides the members. */
        public boolean followsStatefulSet() {
            return StringUtils.hasText(statefulSet);
        }
    }

    /**
     * @param factor        how many nodes hold each key (fewer if the cluster is smaller); the
     *                      default of {@code replicas=} is a majority of them. The same on every node.
     * @param timeout       how long a coordinator waits for {@code ack} replicas before answering 504
     * @param maxConnections persistent connections to each peer, each carrying many requests at once
     * @param readHedgeDelay how long a read waits for the {@code ack} replicas it asked first before
     *                       asking the others too; 0 asks all {@code from} replicas at once
     * @param windowCalls    calls a node has in flight to one replica (its own store too) at most;
     *                       more wait for a place, and a write is answered only once each of its
     *                       replica calls has one, so a replica that falls behind slows its
     *                       coordinators' clients instead of being sent more than it can take
     * @param windowBytes    bytes of values a node has in flight to one replica at most, likewise
     *                       (a single value larger than this still goes, alone)
     * @param conditionalTimeout how long a request under consensus (a conditional write, a serial
     *                       read) may take in all, its rounds retried after contention included,
     *                       before it answers 504; each round's phases wait up to {@code timeout}
     */
    public record Replication(@DefaultValue("3") @Positive int factor, @DefaultValue("1s") @Positive Duration timeout,
            @DefaultValue("2") @Positive int maxConnections, @DefaultValue("20ms") @PositiveOrZero Duration readHedgeDelay,
            @DefaultValue("128") @Positive int windowCalls, @DefaultValue("8MB") @Positive DataSize windowBytes,
            @DefaultValue("3s") @Positive Duration conditionalTimeout) {

        /** The longest a call to a replica takes: the timeout once it has a connection, which may take as long again. */
        public Duration callBound() {
            return timeout.multipliedBy(2).plusSeconds(1);
        }
    }

    /**
     * @param maxOffset a timestamp from another node (a write, a read's answer) further ahead of
     *                  this node's clock is refused: one node with a clock far in the future must
     *                  not win every conflict, nor drag the other clocks along
     */
    public record Clock(@DefaultValue("500ms") @Positive Duration maxOffset) {
    }

    /**
     * @param window     how long a coordinator keeps the writes a replica missed; a replica away
     *                   longer is healed by a full repair instead
     * @param maxSize    bytes of hints kept per replica; past it the replica is marked for a full repair
     * @param replayRate bytes per second a node replays to a replica that came back
     */
    public record Hints(@DefaultValue("3h") @Positive Duration window, @DefaultValue("64MB") @Positive DataSize maxSize,
            @DefaultValue("4MB") @Positive DataSize replayRate) {
    }

    /**
     * @param enabled  off, a node never starts a repair (it still answers its peers' repairs); a
     *                 node with peers then never purges tombstones, which wait for a repair
     * @param interval how often a node compares the ranges it shares with each peer (Merkle-style
     *                 digests) and streams the differences; it must stay well under
     *                 storage.tombstone-grace-period, or a delete could come back
     * @param rate     bytes per second repair, joins, leaves and cleanup may always stream, both
     *                 directions together: where a transfer starts and the least it is slowed to
     * @param maxRate  the most they may stream: the rate rises from {@code rate} towards it while
     *                 the p99 of client requests stays within {@code latencyFactor} times its quiet
     *                 value, and halves when it does not; equal to {@code rate}, the rate is fixed
     * @param latencyFactor how far transfers may slow client requests' p99 (2: to twice the quiet p99)
     */
    public record Repair(@DefaultValue("true") boolean enabled, @DefaultValue("5m") @Positive Duration interval,
            @DefaultValue("8MB") @Positive DataSize rate, @DefaultValue("256MB") @Positive DataSize maxRate,
            @DefaultValue("2") @DecimalMin("1") double latencyFactor) {

        public static final String MAX_RATE = "ringkv.repair.max-rate";
    }

    /**
     * @param settle how long a node's ring (members and their states) must stay unchanged before
     *               the node drops by itself what it keeps for ranges it owns in none of its
     *               rings: long enough for every peer to have adopted the same ring, which takes
     *               them a discovery round or two; 0: only on request
     */
    public record Cleanup(@DefaultValue("10m") @PositiveOrZero Duration settle) {
    }

    /**
     * @param target     where backups go: {@code s3://bucket/prefix} (an S3-compatible object store;
     *                   credentials from the AWS SDK's usual places, such as {@code AWS_ACCESS_KEY_ID}
     *                   and {@code AWS_SECRET_ACCESS_KEY}) or {@code file:///path} (a mounted volume);
     *                   unset: no backups, and {@code /actuator/backup} says so
     * @param endpoint   the object store's URL when it is not AWS S3 itself (path-style requests)
     * @param region     the object store's region
     * @param rate       bytes per second a node uploads its snapshot at, at most
     * @param keep       complete backups kept; older ones, and the table files only they use, are removed
     * @param stagingDir where a node's snapshot waits for its upload, and a restore's download;
     *                   on the data volume, so that a snapshot is hard links, not a copy; unset:
     *                   {@code backup-staging} in the data directory
     */
    public record Backup(URI target, URI endpoint, @DefaultValue("us-east-1") String region,
            @DefaultValue("32MB") @Positive DataSize rate, @DefaultValue("7") @Positive int keep, Path stagingDir) {

        public Backup {
            if (target != null && !"s3".equals(target.getScheme()) && !"file".equals(target.getScheme())) {
                throw new InvalidSettingException("ringkv.backup.target", "must be s3://bucket/prefix or file:///path, got " + target);
            }
            if (target != null && "s3".equals(target.getScheme()) && (target.getHost() == null || target.getHost().isEmpty())) {
                throw new InvalidSettingException("ringkv.backup.target", "names no bucket: " + target);
            }
        }

        /** Where snapshots wait: {@link #stagingDir}, or {@code backup-staging} in the data directory. */
        public Path stagingIn(Path dataDir) {
            return stagingDir != null ? stagingDir : dataDir.resolve("backup-staging");
        }
    }

    /**
     * @param tombstoneGracePeriod how long a delete's tombstone is kept before compaction may drop it
     * @param memorySize           RocksDB's memory, off the JVM heap: one cache that data blocks, index and
     *                             filter blocks and the memtables share (the chart derives it from the pod's
     *                             memory limit)
     * @param syncWrites           fsync the write-ahead log on every write (slower; survives power loss)
     * @param threads              threads that run RocksDB calls off the event loop
     * @param queueSize            storage calls that may wait for a thread before new ones are refused with 503
     * @param queueBytes           bytes of values that may wait for the store's writer before new writes are refused
     * @param minFreeDisk          below this much free disk the node reports its storage DOWN (not ready)
     * @param maxWalSize           about the most disk the write-ahead log takes: past it, the column
     *                             families that keep its oldest file alive are flushed
     * @param expiredCompactionInterval the age at which a file of records that expire is compacted even
     *                             if no write made it, so that the disk of expired values comes back
     */
    public record Storage(
            @DefaultValue("24h") @Positive Duration tombstoneGracePeriod,
            @DefaultValue("128MB") @Positive DataSize memorySize,
            @DefaultValue("false") boolean syncWrites,
            @DefaultValue("8") @Positive int threads,
            @DefaultValue("10000") @Positive int queueSize,
            @DefaultValue("64MB") @Positive DataSize queueBytes,
            @DefaultValue("64MB") DataSize minFreeDisk,
            @DefaultValue("64MB") @Positive DataSize maxWalSize,
            @DefaultValue("6h") @Positive Duration expiredCompactionInterval) {

        public static final String MEMORY_SIZE = "ringkv.storage.memory-size";
        /** Below it the memtables alone (two of 4 MiB for each family) would exceed the budget. */
        public static final DataSize MIN_MEMORY_SIZE = DataSize.ofMegabytes(16);
    }

    /** @param breaker the circuit breaker each node keeps per peer */
    public record Health(@DefaultValue @Valid Breaker breaker) {
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
            @DefaultValue("20") @Positive int windowSize,
            @DefaultValue("10") @Positive int minimumCalls,
            @DefaultValue("50") @Percentage float failureRate,
            @DefaultValue("1s") @Positive Duration slowCallThreshold,
            @DefaultValue("80") @Percentage float slowCallRate,
            @DefaultValue("5s") @Positive Duration openFor,
            @DefaultValue("3") @Positive int probeCalls) {
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
    public record Overload(@DefaultValue("256") @Positive int maxClientRequests,
            @DefaultValue("1024") @Positive int maxReplicaRequests, @DefaultValue("10s") @Positive Duration bodyTimeout,
            @DefaultValue("32MB") DataSize maxBytesInFlight) {
    }

    /**
     * @param warmUpRequests reads and writes of its own (of each) a node sends itself before it
     *                       reports ready, so that live traffic does not meet a cold JIT; 0: none
     * @param warmUpTimeout  the longest the warm-up may delay readiness
     */
    public record Startup(@DefaultValue("1000") @PositiveOrZero int warmUpRequests,
            @DefaultValue("30s") @Positive Duration warmUpTimeout) {
    }

    /**
     * @param drainDelay how long a node told to stop keeps serving, unready and answering every
     *                   request with {@code Connection: close}, before it stops taking connections:
     *                   long enough for load balancers to drop it and for busy clients to move their
     *                   keep-alive connections elsewhere. On Kubernetes a few seconds (the chart: 5s),
     *                   kube-proxy's update of the Service included
     */
    public record Shutdown(@DefaultValue("1s") @PositiveOrZero Duration drainDelay) {
    }
}
