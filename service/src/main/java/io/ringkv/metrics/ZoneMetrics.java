package io.ringkv.metrics;

import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.ToIntFunction;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.ringkv.health.PeerMonitors;
import io.ringkv.health.PeerState;
import io.ringkv.ring.ClusterMembership;
import io.ringkv.ring.HashRing;
import io.ringkv.ring.ZoneSpread;
import io.ringkv.ring.ZoneSpread.ZoneMembers;

/**
 * The failure domains as this node sees them: per zone, its members on the ring
 * ({@code ringkv.zone.members}) and those UP ({@code ringkv.zone.members.up}), as {@code GET
 * /v0/cluster} counts them; and the ring's ranges whose replicas share a zone they need not
 * ({@code ringkv.ring.ranges.zone.shared}, {@link ZoneSpread#rangesSharingZone}) at the default
 * replication factor.
 */
public final class ZoneMetrics implements MeterBinder {

    /** The ranges sharing a zone on one ring: counted once per ring, not at every scrape. */
    private record Counted(HashRing ring, int sharing) {
    }

    private final ClusterMembership membership;
    private final PeerMonitors monitors;
    private final int replicationFactor;
    private final AtomicReference<Counted> counted = new AtomicReference<>();
    /** The zones the per-zone gauges have rows for: registered again only when they change. */
    private Set<String> zonesShown = Set.of();

    /** @param replicationFactor ringkv.replication.factor: a key's replicas where a request does not say */
    public ZoneMetrics(ClusterMembership membership, PeerMonitors monitors, int replicationFactor) {
        this.membership = membership;
        this.monitors = monitors;
        this.replicationFactor = replicationFactor;
    }

    @Override
    public void bindTo(MeterRegistry meters) {
        Gauge.builder("ringkv.ring.ranges.zone.shared", this, ZoneMetrics::rangesSharingZone)
                .description("Ring ranges whose replicas (at the default replication factor) are in fewer zones than they could be:"
                        + " a member without a zone among zoned ones")
                .register(meters);
        MultiGauge members = MultiGauge.builder("ringkv.zone.members")
                .description("Members of the ring in the zone")
                .register(meters);
        MultiGauge up = MultiGauge.builder("ringkv.zone.members.up")
                .description("Members of the ring in the zone that this node sees UP (itself included)")
                .register(meters);
        showZones(members, up);
        membership.onChange(view -> showZones(members, up));
    }

    /**
     * One row per zone of the ring, read when scraped; a zone no member is in any more loses its
     * rows. Synchronized: two rings changing at once must not leave the older one's zones shown.
     */
    private synchronized void showZones(MultiGauge members, MultiGauge up) {
        Set<String> zones = Set.copyOf(membership.ring().zones().values());
        if (zones.equals(zonesShown)) {
            return;
        }
        zonesShown = zones;
        members.register(rows(zones, ZoneMembers::members), true);
        up.register(rows(zones, ZoneMembers::up), true);
    }

    private List<MultiGauge.Row<?>> rows(Set<String> zones, ToIntFunction<ZoneMembers> count) {
        return zones.stream().<MultiGauge.Row<?>>map(zone -> MultiGauge.Row.of(Tags.of("zone", zone), () -> zoneMembers().stream()
                .filter(counts -> counts.zone().equals(zone)).mapToInt(count).sum())).toList();
    }

    private List<ZoneMembers> zoneMembers() {
        return ZoneSpread.members(membership.ring(), member -> monitors.stateOf(member, membership.self()) == PeerState.UP);
    }

    private int rangesSharingZone() {
        HashRing ring = membership.ring();
        Counted last = counted.get();
        if (last == null || last.ring() != ring) {
            last = new Counted(ring, ZoneSpread.rangesSharingZone(ring, Math.min(replicationFactor, ring.size())));
            counted.set(last);
        }
        return last.sharing();
    }
}
