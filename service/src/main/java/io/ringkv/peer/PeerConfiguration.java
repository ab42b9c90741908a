package io.ringkv.peer;

import java.time.Duration;
import java.util.HexFormat;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.client.ReactorResourceFactory;
import org.springframework.util.StringUtils;

import io.micrometer.core.instrument.MeterRegistry;
import io.ringkv.peer.client.ClientSecurity;
import io.ringkv.peer.client.ConnectionSettings;
import io.ringkv.peer.client.NodeInfoClient;
import io.ringkv.peer.client.PeerConnector;
import io.ringkv.peer.message.PeerService;
import io.ringkv.peer.server.PeerServer;
import io.ringkv.peer.server.PeerServerCustomizer;
import io.ringkv.peer.server.ServerSettings;
import io.ringkv.peer.wire.Handshake;
import io.ringkv.record.KeyedRecord;
import io.ringkv.record.RecordCodec;
import io.ringkv.ring.ClusterMembership;
import io.ringkv.settings.RingkvProperties;
import reactor.core.scheduler.Scheduler;
import reactor.netty.resources.LoopResources;

/**
 * The cluster port: the peer server, the connections to peers, the handshake between them, and
 * the event loops they share with the public server. Without TLS the peer links are plaintext
 * ({@code tls} supplies the {@link ClientSecurity} and {@link PeerServerCustomizer} that secure them).
 */
@Configuration(proxyBeanMethods = false)
public class PeerConfiguration {

    /** Bytes of records a peer may send ahead on a range stream: what one stream may buffer. */
    private static final int SCAN_WINDOW_BYTES = 256 * 1024;

    /**
     * The node's own event loops instead of Reactor Netty's JVM-wide ones: closing a node then
     * releases exactly what it started, and nodes sharing a JVM (as in the tests) stay independent.
     * The public server, the peer server and the peer clients share them, as many as
     * {@code ringkv.event-loops}: more loops than cores only switch between each other.
     */
    @Bean
    public ReactorResourceFactory reactorResourceFactory(RingkvProperties properties) {
        ReactorResourceFactory factory = new ReactorResourceFactory();
        factory.setUseGlobalResources(false);
        int loops = properties.eventLoopCount();
        factory.setLoopResourcesSupplier(() -> LoopResources.create("ringkv-loop", loops, true));
        return factory;
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

    /** Answers peers on the cluster port; it takes the storage scheduler so that it closes before it. */
    @Bean(destroyMethod = "close")
    PeerServer peerServer(RingkvProperties properties, Handshake handshake, PeerService replicaService,
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

    /** The largest record a peer may send: the largest value a client may write, and its header. */
    private static int maxRecordBytes(RingkvProperties properties) {
        return properties.maxValueBytes() + RecordCodec.MAX_HEADER_SIZE;
    }
}
