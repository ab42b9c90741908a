package io.ringkv.discovery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

import io.ringkv.ring.Member;
import io.ringkv.settings.InvalidSettingException;
import io.ringkv.settings.RingkvProperties;

/** Where a node's zone comes from: by hand first, then by ordinal, then its Node's label, asked only then. */
class SelfZoneTest {

    private static final String SELF = "http://ringkv-4.ringkv-headless.shop.svc.cluster.local:8080";

    private final List<String> nodesAsked = new ArrayList<>();

    private Function<String, Optional<String>> nodeLabel(Optional<String> zone) {
        return node -> {
            nodesAsked.add(node);
            return zone;
        };
    }

    private static RingkvProperties.Cluster cluster(Map<String, String> settings) {
        var source = new MapConfigurationPropertySource(settings);
        source.put("ringkv.cluster.self", SELF);
        return new Binder(source).bindOrCreate("ringkv", RingkvProperties.class).cluster();
    }

    @Test
    void theZoneSetByHandWinsAndNoNodeIsAsked() {
        Member self = SelfZone.of(cluster(Map.of("ringkv.cluster.zone", "zone-x", "ringkv.cluster.zones-by-ordinal", "a,b",
                "ringkv.cluster.zone-from-node", "worker-1")), SELF, nodeLabel(Optional.of("zone-n")));
        assertThat(self).isEqualTo(Member.inZone(SELF, "zone-x"));
        assertThat(nodesAsked).isEmpty();
    }

    @Test
    void zonesByOrdinalComeNextAndNoNodeIsAsked() {
        Member self = SelfZone.of(cluster(Map.of("ringkv.cluster.zones-by-ordinal", "zone-a,zone-b,zone-c",
                "ringkv.cluster.zone-from-node", "worker-1")), SELF, nodeLabel(Optional.of("zone-n")));
        assertThat(self.zone()).as("ordinal 4 of 3 zones").hasValue("zone-b");
        assertThat(nodesAsked).isEmpty();
    }

    @Test
    void thenTheNodesLabelIfItHasOne() {
        assertThat(SelfZone.of(cluster(Map.of("ringkv.cluster.zone-from-node", "worker-1")), SELF,
                nodeLabel(Optional.of("zone-n"))).zone()).hasValue("zone-n");
        assertThat(SelfZone.of(cluster(Map.of("ringkv.cluster.zone-from-node", "worker-2")), SELF,
                nodeLabel(Optional.empty()))).as("a Node without the label").isEqualTo(Member.named(SELF));
        assertThat(nodesAsked).containsExactly("worker-1", "worker-2");
    }

    @Test
    void nothingSetIsNoZone() {
        assertThat(SelfZone.of(cluster(Map.of()), SELF, nodeLabel(Optional.of("zone-n")))).isEqualTo(Member.named(SELF));
        assertThat(nodesAsked).isEmpty();
    }

    @Test
    void aNodeThatCannotReadItsNodeDoesNotStart() {
        Function<String, Optional<String>> refused = node -> {
            throw new InvalidSettingException(RingkvProperties.Cluster.ZONE_FROM_NODE, "403");
        };
        assertThatThrownBy(() -> SelfZone.of(cluster(Map.of("ringkv.cluster.zone-from-node", "worker-1")), SELF, refused))
                .isInstanceOf(InvalidSettingException.class).hasMessageContaining("zone-from-node");
    }

    @Test
    void zonesByOrdinalNeedAStatefulSetsPod() {
        var cluster = cluster(Map.of("ringkv.cluster.zones-by-ordinal", "a,b"));
        assertThatThrownBy(() -> SelfZone.of(cluster, "http://127.0.0.1:8080", nodeLabel(Optional.empty())))
                .isInstanceOf(InvalidSettingException.class)
                .hasMessageStartingWith("Invalid setting ringkv.cluster.zones-by-ordinal: gives zones by a StatefulSet pod's ordinal");
    }
}
