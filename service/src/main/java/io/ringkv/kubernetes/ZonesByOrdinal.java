package io.ringkv.kubernetes;

import java.util.List;

import io.ringkv.settings.InvalidSettingException;

/**
 * Zones given by hand to a StatefulSet's pods, for clusters whose Nodes carry no zone label: the
 * pod of ordinal {@code i} is in {@code zones[i % zones.size()]}, so consecutive pods are in
 * different zones and each zone holds a share of them. The pods must then run where their zones
 * say (node affinity per zone, or zones that are only racks of hosts the pods are spread over).
 */
public final class ZonesByOrdinal {

    private ZonesByOrdinal() {
    }

    /**
     * The zone of the pod this node runs in.
     *
     * @param setting where the zones were given: what is refused if the node is no StatefulSet's pod
     * @param self    this node's name on the ring, whose host begins with its pod's name
     * @param zones   the zones by ordinal, at least one
     * @throws InvalidSettingException when the node's name is not a StatefulSet pod's
     */
    public static String zoneOf(String setting, String self, List<String> zones) {
        String pod = StatefulSetScale.podOf(self);
        int ordinal = StatefulSetScale.ordinal(pod).orElseThrow(() -> new InvalidSettingException(setting,
                "gives zones by a StatefulSet pod's ordinal, but this node's name, " + self + ", is not a pod's of a"
                        + " StatefulSet (<statefulset>-<ordinal>.<headless service>...): set ringkv.cluster.zone instead"));
        return zones.get(ordinal % zones.size());
    }
}
