package io.ringkv.health;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.micrometer.core.instrument.MeterRegistry;

/** One {@link PeerMonitor} per peer, created when the peer is first called or asked about. */
public final class PeerMonitors {

    private final BreakerSettings settings;
    private final MeterRegistry meters;
    private final Map<String, PeerMonitor> monitors = new ConcurrentHashMap<>();

    public PeerMonitors(BreakerSettings settings, MeterRegistry meters) {
        this.settings = settings;
        this.meters = meters;
    }

    public PeerMonitor of(String peer) {
        return monitors.computeIfAbsent(peer, name -> new PeerMonitor(name, settings, meters));
    }

    /** How this node ({@code self}) sees a member of its ring: itself UP, as it answers for itself; a peer as its monitor says. */
    public PeerState stateOf(String member, String self) {
        return member.equals(self) ? PeerState.UP : of(member).state();
    }
}
