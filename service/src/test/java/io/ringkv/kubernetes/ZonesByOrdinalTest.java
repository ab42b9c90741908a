package io.ringkv.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;

import org.junit.jupiter.api.Test;

import io.ringkv.settings.InvalidSettingException;

class ZonesByOrdinalTest {

    private static final String SETTING = "ringkv.cluster.zones-by-ordinal";
    private static final List<String> ZONES = List.of("zone-a", "zone-b", "zone-c");

    private static String zoneOfPod(String pod) {
        return ZonesByOrdinal.zoneOf(SETTING, "http://" + pod + ".ringkv-headless.shop.svc.cluster.local:8080", ZONES);
    }

    @Test
    void thePodOfOrdinalIIsInZoneIModuloTheirNumber() {
        assertThat(List.of(zoneOfPod("ringkv-0"), zoneOfPod("ringkv-1"), zoneOfPod("ringkv-2"), zoneOfPod("ringkv-3"),
                zoneOfPod("ringkv-7"))).containsExactly("zone-a", "zone-b", "zone-c", "zone-a", "zone-b");
        assertThat(ZonesByOrdinal.zoneOf(SETTING, "https://db-4.db:8443", List.of("only"))).isEqualTo("only");
    }

    @Test
    void aNodeThatIsNoStatefulSetsPodIsRefusedNamingTheSetting() {
        for (String self : List.of("http://127.0.0.1:8080", "http://ringkv.example.com:8080", "http://ringkv-x.headless:8080")) {
            assertThatThrownBy(() -> ZonesByOrdinal.zoneOf(SETTING, self, ZONES))
                    .isInstanceOf(InvalidSettingException.class)
                    .hasMessageStartingWith("Invalid setting " + SETTING + ": gives zones by a StatefulSet pod's ordinal")
                    .hasMessageContaining(self);
        }
    }
}
