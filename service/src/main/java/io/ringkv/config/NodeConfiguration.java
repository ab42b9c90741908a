package io.ringkv.config;

import java.io.UncheckedIOException;
import java.net.URI;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;
import java.util.stream.Collectors;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.NoneNestedConditions;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.reactor.netty.NettyServerCustomizer;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.http.client.ReactorResourceFactory;
import org.springframework.util.StringUtils;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.ringkv.ledger.RepairLedger;
import io.ringkv.api.ApiRoutes;
import io.ringkv.api.ClientDrain;
import io.ringkv.health.PeerMonitors;
import io.ringkv.hints.Hints;
import io.ringkv.kubernetes.StatefulSetScale;
import io.ringkv.overload.Throttle;
import io.ringkv.peer.client.ClientSecurity;
import io.ringkv.peer.client.NodeInfoClient;
import io.ringkv.peer.client.ConnectionSettings;
import io.ringkv.peer.client.PeerConnector;
import io.ringkv.peer.server.PeerServer;
import io.ringkv.peer.server.PeerServerCustomizer;
import io.ringkv.peer.server.ServerSettings;
import io.ringkv.peer.wire.Handshake;
import io.ringkv.record.HybridClock;
import io.ringkv.record.KeyedRecord;
import io.ringkv.record.LastWriteWins;
import io.ringkv.record.RecordCodec;
import io.ringkv.replication.Coordinator;
import io.ringkv.replication.InFlightReplicaCalls;
import io.ringkv.replication.LocalReplica;
import io.ringkv.replication.ReplicaDirectory;
import io.ringkv.replication.ReplicaService;
import io.ringkv.replication.ReplicaWindow;
import io.ringkv.ring.ClusterMembership;
import io.ringkv.ring.DnsDiscovery;
import io.ringkv.ring.HashRing;
import io.ringkv.ring.Member;
import io.ringkv.ring.StaticPeers;
import io.ringkv.security.ClientTokens;
import io.ringkv.security.RequestCredential;
import io.ringkv.security.Role;
import io.ringkv.settings.InvalidSettingException;
import io.ringkv.startup.WarmUp;
import io.ringkv.storage.RocksStore;
import io.ringkv.storage.StorageException;
import io.ringkv.storage.StorageSettings;
import io.ringkv.tombstones.PurgeHorizon;
import io.ringkv.tombstones.TombstonePurge;
import io.ringkv.tls.ClusterUrls;
import io.ringkv.tls.TlsProperties;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.netty.resources.LoopResources;

/**
 * Wires the node from its settings. The pieces themselves know nothing of Spring; this is the
 * one place that decides which instances exist, and in which order they are closed: Spring
 * destroys a bean before the beans it was built from, so the web server drains first, then the
 * peer server and clients, the storage scheduler and last the store.
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(RingkvProperties.class)
public class NodeConfiguration {

    /**
     * With a static peer list, a node whose store is not a member's (new, or emptied) first asks
     * its peers whether they hold data ({@link StaticPeers}), and pulls its ranges if one does.
     * With a StatefulSet deciding the members, one that is down keeps its ranges: after a restart
     * this node presumes a member holds data if it did when this node last knew (the ledger
     * remembers who did), until the member says otherwise.
     */
    @Bean
    ClusterMembership clusterMembership(RingkvProperties properties, @Value("${server.port:8080}") int serverPort,
            RepairLedger repairLedger, TlsProperties tls) {
        var cluster = properties.cluster();
        Member self = cluster.selfMember(serverPort);
        if (!cluster.discovery().enabled()) {
            List<String> names = cluster.members(self.name());
            ClusterUrls.requireScheme(tls.enabled(), self.name(), names);
            List<Member> members = Member.named(names);
            return repairLedger.joined() ? ClusterMembership.fixed(self, members, cluster.vnodes())
                    : ClusterMembership.fixedJoining(self, members, cluster.vnodes());
        }
        ClusterUrls.requireScheme(tls.enabled(), self.name(), List.of());
        if (!cluster.discovery().followsStatefulSet()) {
            return ClusterMembership.discovered(self, cluster.vnodes());
        }
        ClusterMembership membership = ClusterMembership.discovered(self, cluster.vnodes(), repairLedger::heldData);
        membership.onChange(view -> {
            if (membership.isKnown()) {
                repairLedger.rememberDataHolders(view.ring().names().stream()
                        .filter(member -> membership.state(member).holdsData()).collect(Collectors.toSet()));
            }
        });
        return membership;
    }

    @Bean
    @ConditionalOnProperty(prefix = "ringkv.cluster.discovery", name = "dns-name")
    DnsDiscovery dnsDiscovery(ClusterMembership membership, ReplicaDirectory replicaDirectory, NodeInfoClient nodeInfo,
            RingkvProperties properties) {
        var discovery = properties.cluster().discovery();
        Supplier<Mono<Set<String>>> intent = null;
        if (discovery.followsStatefulSet()) {
            URI self = URI.create(membership.self());
            String pod = self.getHost().split("\\.", 2)[0];
            try {
                StatefulSetScale.memberNames(self, discovery.statefulSet(), 1);
                StatefulSetScale statefulSet = StatefulSetScale.inCluster(discovery.statefulSet(), pod);
                intent = () -> statefulSet.intendedMembers(self);
            } catch (IllegalArgumentException | UncheckedIOException e) {
                throw new InvalidSettingException(RingkvProperties.Discovery.STATEFUL_SET, e.getMessage());
            }
        }
        return new DnsDiscovery(membership, discovery.dnsName(), discovery.refreshInterval(), discovery.removalAfter(),
                discovery.bootstrapTimeout(), address -> nodeInfo.of(address).map(NodeInfoClient.NodeInfo::name), replicaDirectory::probe,
                intent);
    }

    /**
     * With a static peer list (no DNS discovery), the members' states, exchanged each round as DNS
     * discovery's probes exchange them, but around the breakers: with a static list, only the
     * requests a peer serves judge its health, as they always have.
     */
    @Bean
    @Conditional(StaticPeerList.class)
    StaticPeers staticPeers(ClusterMembership membership, ReplicaDirectory replicaDirectory, RingkvProperties properties) {
        return new StaticPeers(membership, properties.cluster().discovery().refreshInterval(), replicaDirectory::exchangeStates);
    }

    /** Exactly when the {@link DnsDiscovery} bean is not made. */
    static final class StaticPeerList extends NoneNestedConditions {

        StaticPeerList() {
            super(ConfigurationPhase.REGISTER_BEAN);
        }

        @ConditionalOnProperty(prefix = "ringkv.cluster.discovery", name = "dns-name")
        static final class DnsDiscoveryOn {
        }
    }

    @Bean(destroyMethod = "close")
    RocksStore rocksStore(RingkvProperties properties) {
        var storage = properties.storage();
        if (storage.memorySize().compareTo(RingkvProperties.Storage.MIN_MEMORY_SIZE) < 0) {
            throw new InvalidSettingException(RingkvProperties.Storage.MEMORY_SIZE,
                    "must be at least " + RingkvProperties.Storage.MIN_MEMORY_SIZE.toMegabytes() + "MB, got " + storage.memorySize());
        }
        try {
            return RocksStore.open(new StorageSettings(properties.dataDir(), storage.memorySize().toBytes(),
                    storage.syncWrites(), storage.queueSize(), storage.queueBytes().toBytes(), storage.maxWalSize().toBytes(),
                    HashRing::token), LastWriteWins.ORDER);
        } catch (StorageException e) {
            // Most often another node already runs on the same directory (RocksDB's LOCK file).
            throw new InvalidSettingException(RingkvProperties.DATA_DIR, e.getMessage());
        }
    }

    /**
     * Runs the storage calls that may wait for the disk (reads the cache cannot answer, ranges).
     * Its queues are per thread, so each gets its share of queue-size. Takes the store as a
     * parameter only so that it is disposed before the store closes.
     */
    @Bean(destroyMethod = "dispose")
    Scheduler storageScheduler(RingkvProperties properties, RocksStore store) {
        var storage = properties.storage();
        return Schedulers.newBoundedElastic(storage.threads(), Math.max(1, storage.queueSize() / storage.threads()),
                "ringkv-storage");
    }

    @Bean
    WarmUp warmUp(Coordinator coordinator, ClusterMembership membership, ReplicaDirectory replicaDirectory,
            RingkvProperties properties, Environment environment, ObjectProvider<ClientSecurity> security,
            ObjectProvider<ClientTokens> clientTokens) {
        var startup = properties.startup();
        // The port the server really listens on, known once it started (server.port may be 0).
        return new WarmUp(coordinator, membership, replicaDirectory,
                () -> environment.getRequiredProperty("local.server.port", Integer.class),
                security.getIfAvailable(() -> ClientSecurity.PLAINTEXT),
                // With client authentication on, the warm-up's GETs need a read token like any client's.
                () -> Optional.ofNullable(clientTokens.getIfAvailable()).map(tokens -> tokens.issue("warm-up", Role.READ))
                        .orElse(RequestCredential.NONE),
                new WarmUp.Settings(startup.warmUpRequests(), startup.warmUpTimeout(), properties.replication().timeout()));
    }

    /**
     * Tombstones go once their delete is older than the grace period and than the last repair with
     * every other member (so no replica that missed the delete can bring the value back); looked
     * for ten times a period.
     */
    @Bean
    TombstonePurge tombstonePurge(RocksStore store, Scheduler storageScheduler, PurgeHorizon purgeHorizon,
            RingkvProperties properties) {
        Duration grace = properties.storage().tombstoneGracePeriod();
        Duration every = Duration.ofMillis(Math.clamp(grace.toMillis() / 10, 1_000, 3_600_000));
        return new TombstonePurge(store, storageScheduler, every,
                () -> purgeHorizon.cutoff(System.currentTimeMillis() - grace.toMillis()));
    }

    /**
     * The node's own event loops instead of Reactor Netty's JVM-wide ones: closing a node then
     * releases exactly what it started, and nodes sharing a JVM (as in the tests) stay independent.
     * The public server, the peer server and the peer clients share them, as many as
     * {@code ringkv.event-loops}: more loops than cores only switch between each other.
     */
    @Bean
    ReactorResourceFactory reactorResourceFactory(RingkvProperties properties) {
        ReactorResourceFactory factory = new ReactorResourceFactory();
        factory.setUseGlobalResources(false);
        int loops = properties.eventLoopCount();
        factory.setLoopResourcesSupplier(() -> LoopResources.create("ringkv-loop", loops, true));
        return factory;
    }

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

    /**
     * How peers prove the cluster secret to each other. A node without peers may have no secret; it
     * then gets a random one that nobody else knows, so that its cluster port accepts no one.
     */
    @Bean
    Handshake handshake(RingkvProperties properties) {
        var cluster = properties.cluster();
        String secret = cluster.secret();
        // The previous secret is accepted too while a rotation rolls out (see Handshake).
        return new Handshake(StringUtils.hasText(secret) ? secret : HexFormat.of().formatHex(Handshake.nonce()),
                cluster.previousSecret());
    }

    @Bean
    NodeInfoClient nodeInfoClient(ReactorResourceFactory resources, RingkvProperties properties,
            ObjectProvider<ClientSecurity> security) {
        return new NodeInfoClient(resources.getLoopResources(), properties.replication().timeout(),
                properties.cluster().discovery().refreshInterval(), security.getIfAvailable(() -> ClientSecurity.PLAINTEXT));
    }

    @Bean
    ReplicaService replicaService(ClusterMembership membership, RocksStore store, HybridClock hybridClock,
            RepairLedger repairLedger, Throttle transferThrottle) {
        return new ReplicaService(membership.self(), store, hybridClock, membership, repairLedger, transferThrottle);
    }

    /** Answers peers on the cluster port; it takes the storage scheduler so that it closes before it. */
    @Bean(destroyMethod = "close")
    PeerServer peerServer(RingkvProperties properties, Handshake handshake, ReplicaService replicaService,
            Scheduler storageScheduler, ReactorResourceFactory resources, MeterRegistry meters,
            ObjectProvider<PeerServerCustomizer> customizers) {
        var overload = properties.overload();
        Duration replicationTimeout = properties.replication().timeout();
        var settings = new ServerSettings(properties.cluster().listenPort(),
                handshake, KeyedRecord.MAX_KEY_BYTES, maxRecordBytes(properties),
                overload.maxReplicaRequests(), overload.maxBytesInFlight().toBytes(), replicationTimeout,
                replicationTimeout.multipliedBy(5));
        return new PeerServer(settings, replicaService, storageScheduler, resources.getLoopResources(), meters,
                server -> customizers.orderedStream().reduce(server, (customized, customizer) -> customizer.apply(customized),
                        (first, second) -> second));
    }

    @Bean
    PeerConnector peerConnector(RingkvProperties properties, ClusterMembership membership, Handshake handshake,
            ReactorResourceFactory resources, NodeInfoClient nodeInfo, ObjectProvider<ClientSecurity> security, PeerServer peerServer) {
        var replication = properties.replication();
        var settings = new ConnectionSettings(membership.self(), handshake,
                replication.timeout(), replication.maxConnections(), SCAN_WINDOW_BYTES,
                KeyedRecord.MAX_KEY_BYTES, maxRecordBytes(properties), properties.cluster().discovery().refreshInterval(),
                peerServer.port());
        return new PeerConnector(settings, resources.getLoopResources(), nodeInfo, security.getIfAvailable(() -> ClientSecurity.PLAINTEXT));
    }

    /**
     * A peer that connects to this node or pings it is readmitted at once if this node shuns it; with
     * a static peer list, the state a member tells in its ping is heard as from its answer to this
     * node's; with DNS discovery, a ping that tells a change makes this node ask the member back.
     */
    @Bean(destroyMethod = "close")
    ReplicaDirectory replicaDirectory(ClusterMembership membership, LocalReplica localReplica, PeerMonitors peerMonitors,
            PeerConnector peerConnector, RepairLedger repairLedger, ReplicaService replicaService, RingkvProperties properties) {
        var directory = new ReplicaDirectory(membership, localReplica, peerConnector, peerMonitors, repairLedger,
                () -> replicaWindow(properties));
        replicaService.onHeardFrom(directory::heardFrom);
        if (!properties.cluster().discovery().enabled()) {
            replicaService.onPeerStatus(directory::toldInPing);
        } else {
            // A node back on an old volume PINGs before it has heard whether its peers purged deletes
            // it missed (PurgeHorizonCheck), so its PING may say NORMAL while its answers already say
            // JOINING: only the answers, made after the check, count, and a PING that tells a change
            // is answered by asking back.
            replicaService.onPeerStatus(directory::askBackIfChanged);
        }
        return directory;
    }

    @Bean
    Coordinator coordinator(ReplicaDirectory replicaDirectory, HybridClock hybridClock, Hints hints,
            RingkvProperties properties, MeterRegistry meters) {
        var replication = properties.replication();
        return new Coordinator(replicaDirectory, hybridClock, replication.timeout(), replication.readHedgeDelay(),
                replication.factor(), hints, meters);
    }

    /**
     * On SIGTERM, clients are told to go elsewhere before the web server stops taking requests;
     * the requests then in progress get Spring's limit for a shutdown phase to finish.
     */
    @Bean
    ClientDrain clientDrain(RingkvProperties properties, ApplicationEventPublisher events, Environment environment,
            @Value("${spring.lifecycle.timeout-per-shutdown-phase:30s}") Duration phaseTimeout) {
        return new ClientDrain(properties.shutdown().drainDelay(), phaseTimeout,
                () -> environment.getRequiredProperty("local.server.port", Integer.class), events);
    }

    @Bean
    NettyServerCustomizer clientDrainTracking(ClientDrain clientDrain) {
        return clientDrain.tracking();
    }

    @Bean
    ApiRoutes.Settings apiSettings(RingkvProperties properties) {
        return new ApiRoutes.Settings(properties.maxValueBytes(), properties.overload().bodyTimeout());
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

    /** Bytes of records a peer may send ahead on a range stream: what one stream may buffer. */
    private static final int SCAN_WINDOW_BYTES = 256 * 1024;

    private static int maxRecordBytes(RingkvProperties properties) {
        return properties.maxValueBytes() + RecordCodec.HEADER_SIZE;
    }
}
