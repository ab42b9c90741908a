package io.ringkv.api;

import java.net.URI;
import java.util.List;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import io.ringkv.health.PeerMonitors;
import io.ringkv.health.PeerState;
import io.ringkv.ring.ClusterMembership;
import io.ringkv.ring.DnsDiscovery;

/** {@code GET /v0/cluster}: this node's view of the cluster, as JSON. */
@RestController
public class ClusterController {

    public record Member(String name, String address, PeerState state) {
    }

    public record ClusterView(String self, long version, boolean known, List<Member> members) {
    }

    private final ClusterMembership membership;
    private final PeerMonitors monitors;
    private final ObjectProvider<DnsDiscovery> discovery;

    public ClusterController(ClusterMembership membership, PeerMonitors monitors, ObjectProvider<DnsDiscovery> discovery) {
        this.membership = membership;
        this.monitors = monitors;
        this.discovery = discovery;
    }

    @GetMapping("/v0/cluster")
    public ClusterView cluster() {
        var view = membership.view();
        DnsDiscovery dns = discovery.getIfAvailable();
        List<Member> members = view.ring().members().stream()
                .map(name -> new Member(name, addressOf(name, dns),
                        name.equals(membership.self()) ? PeerState.UP : monitors.of(name).state()))
                .toList();
        return new ClusterView(membership.self(), view.version(), membership.isKnown(), members);
    }

    /** Where discovery last found the member, or else the host of its name. */
    private static String addressOf(String name, DnsDiscovery dns) {
        String discovered = dns == null ? null : dns.addressOf(name);
        return discovered != null ? discovered : URI.create(name).getHost();
    }
}
