package io.ringkv.discovery;

import java.net.URI;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.NoneNestedConditions;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;

import io.ringkv.kubernetes.NodeZone;
import io.ringkv.kubernetes.StatefulSetScale;
import io.ringkv.ledger.RepairLedger;
import io.ringkv.peer.client.NodeInfoClient;
import io.ringkv.record.RecordCodec;
import io.ringkv.replication.ReplicaDirectory;
import io.ringkv.ring.ClusterMembership;
import io.ringkv.ring.Member;
import io.ringkv.settings.RingkvProperties;
import io.ringkv.tls.ClusterUrls;
import io.ringkv.tls.TlsProperties;
import reactor.core.publisher.Mono;

/**
 * Who is in the cluster, and how the node finds out: a static peer list, or the headless
 * Service's DNS names (optionally following a StatefulSet's intended members).
 */
@Configuration(proxyBeanMethods = false)
public class DiscoveryConfiguration {

    private static final Logger log = LoggerFactory.getLogger(DiscoveryConfiguration.class);

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
        Member setUp = SelfZone.of(cluster, cluster.selfName(serverPort),
                node -> NodeZone.atStart(RingkvProperties.Cluster.ZONE_FROM_NODE, node))
                .with(Member.RECORD_FORMAT, String.valueOf(RecordCodec.NEWEST_FORMAT));
        Member self = inZoneJoinedIn(setUp, repairLedger);
        ClusterMembership membership = membership(self, cluster, repairLedger, tls);
        if (!self.equals(setUp) && self.zone().isPresent() && setUp.zone().isPresent()) {
            log.warn("This node's store joined the cluster in zone '{}' and it is now set up in zone '{}': it moves there"
                    + " as its data does, handing its ranges over, then pulling those of its new zone (docs/operations.md, zones)",
                    self.zone().get(), setUp.zone().get());
            membership.planZoneMove(setUp.zone().get());
        }
        return membership;
    }

    private static ClusterMembership membership(Member self, RingkvProperties.Cluster cluster, RepairLedger repairLedger,
            TlsProperties tls) {
        if (!cluster.discovery().enabled()) {
            List<String> names = cluster.members(self.name());
            ClusterUrls.requireScheme(tls.enabled(), self.name(), names);
            List<Member> members = Member.named(names);
            return repairLedger.joined() ? ClusterMembership.fixed(self, members, cluster.vnodes(), repairLedger)
                    : ClusterMembership.fixedJoining(self, members, cluster.vnodes(), repairLedger);
        }
        ClusterUrls.requireScheme(tls.enabled(), self.name(), List.of());
        return cluster.discovery().followsStatefulSet()
                ? ClusterMembership.discovered(self, cluster.vnodes(), repairLedger, repairLedger)
                : ClusterMembership.discovered(self, cluster.vnodes(), repairLedger);
    }

    /**
     * This node as it is set up, but in the zone its store joined the cluster in: in another zone
     * its keys' replicas would be other members than those that hold them. A node set up in
     * another zone than it joined in moves there as its data does ({@code handover.DataMovement});
     * one that joined without a zone keeps none, and one that joined in a zone and is set up
     * without keeps it (the node warns): a chart that starts telling zones rolls over a cluster
     * made before them without moving its data, and no zone is dropped by a setting lost.
     */
    private static Member inZoneJoinedIn(Member self, RepairLedger ledger) {
        Optional<String> joinedIn = ledger.zoneOf(self.name());
        if (!ledger.joined() || joinedIn.equals(self.zone())) {
            return self;
        }
        if (joinedIn.isPresent() && self.zone().isPresent()) {
            return self.withZone(joinedIn.get());
        }
        log.warn("This node's zone ({}, {} or its Node's label) is {}, but this node's store joined the cluster {}: it"
                + " stays as it joined. Only a move from one zone to another moves a node's data; to give a node that"
                + " joined without a zone one, take it out of the cluster and add it anew (docs/operations.md, zones)",
                RingkvProperties.Cluster.ZONE, RingkvProperties.Cluster.ZONES_BY_ORDINAL,
                self.zone().map(zone -> "'" + zone + "'").orElse("not set"),
                joinedIn.map(zone -> "in zone '" + zone + "'").orElse("without a zone"));
        return joinedIn.map(self::withZone).orElseGet(self::withoutZone);
    }

    @Bean
    @ConditionalOnProperty(prefix = "ringkv.cluster.discovery", name = "dns-name")
    DnsDiscovery dnsDiscovery(ClusterMembership membership, ReplicaDirectory replicaDirectory, NodeInfoClient nodeInfo,
            RingkvProperties properties) {
        var discovery = properties.cluster().discovery();
        Supplier<Mono<Set<String>>> intent = null;
        if (discovery.followsStatefulSet()) {
            StatefulSetScale statefulSet = StatefulSetScale.ofMember(RingkvProperties.Discovery.STATEFUL_SET,
                    discovery.statefulSet(), membership.self());
            URI self = URI.create(membership.self());
            intent = () -> statefulSet.intendedMembers(self);
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
}
