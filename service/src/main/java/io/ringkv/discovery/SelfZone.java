package io.ringkv.discovery;

import java.util.Optional;
import java.util.function.Function;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.util.StringUtils;

import io.ringkv.kubernetes.NodeZone;
import io.ringkv.kubernetes.ZonesByOrdinal;
import io.ringkv.ring.Member;
import io.ringkv.settings.RingkvProperties.Cluster;

/**
 * The zone this node is set up in, from the first of: {@code ringkv.cluster.zone}, given by hand;
 * {@code ringkv.cluster.zones-by-ordinal}, by its pod's ordinal; its Kubernetes Node's
 * {@code topology.kubernetes.io/zone} label ({@code ringkv.cluster.zone-from-node}); else none.
 * The Node is asked only when it decides, so a zone given by hand needs no right on Nodes.
 */
final class SelfZone {

    private static final Logger log = LoggerFactory.getLogger(SelfZone.class);

    private SelfZone() {
    }

    /**
     * @param nodeZone the zone label of the Node of a name, read once ({@link NodeZone#atStart})
     */
    static Member of(Cluster cluster, String selfName, Function<String, Optional<String>> nodeZone) {
        if (!cluster.zone().isEmpty()) {
            return Member.inZone(selfName, cluster.zone());
        }
        if (!cluster.zonesByOrdinal().isEmpty()) {
            return Member.inZone(selfName, ZonesByOrdinal.zoneOf(Cluster.ZONES_BY_ORDINAL, selfName, cluster.zonesByOrdinal()));
        }
        if (StringUtils.hasText(cluster.zoneFromNode())) {
            Optional<String> zone = nodeZone.apply(cluster.zoneFromNode());
            if (zone.isEmpty()) {
                log.info("Node {} has no label {}: this node has no zone ({})", cluster.zoneFromNode(), NodeZone.LABEL,
                        Cluster.ZONE_FROM_NODE);
                return Member.named(selfName);
            }
            log.info("This node is in zone '{}', the label {} of its Node {}", zone.get(), NodeZone.LABEL, cluster.zoneFromNode());
            return Member.inZone(selfName, zone.get());
        }
        return Member.named(selfName);
    }
}
