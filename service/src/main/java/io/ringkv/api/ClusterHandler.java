package io.ringkv.api;

import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import java.util.stream.Collectors;

import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;

import io.ringkv.repair.RepairScheduler;
import io.ringkv.repair.RepairProgress;
import io.ringkv.backup.Progress;
import io.ringkv.handover.DataMovement;
import io.ringkv.health.PeerMonitors;
import io.ringkv.health.PeerState;
import io.ringkv.peer.client.NodeInfoClient;
import io.ringkv.ring.ClusterMembership;
import io.ringkv.discovery.DnsDiscovery;
import io.ringkv.ring.MemberState;
import io.ringkv.ring.ZoneSpread;
import io.ringkv.ring.ZoneSpread.ZoneMembers;
import reactor.core.publisher.Mono;

/** {@code GET /v0/cluster}: this node's view of the cluster, as JSON; {@code GET /v0/cluster/self}: who it is. */
final class ClusterHandler {

    /**
     * @param state      whether this node can reach it (health)
     * @param dataState  where it stands in moving data: JOINING, NORMAL, LEAVING or LEFT
     * @param zone       the zone it told ({@code ringkv.cluster.zone}); null if none, not yet told,
     *                   or told by none (a node of a version before zones)
     */
    public record MemberView(String name, String address, PeerState state, MemberState dataState, String zone) {
    }

    /**
     * {@code clusterPort}: where this node answers peers (they learn it from {@code /v0/cluster/self}).
     * {@code zones}: the ring's zones in name order, each with its members and how many are UP (as
     * {@code members} shows their states); members without a zone are in none.
     * {@code repair}: the repair this node runs now, with its progress; null if none.
     * {@code movement}: the data this node moves now as it joins (pull) or leaves (push); null if none.
     * {@code restore}: the restore of a backup this node runs, or ran last, with its progress; null if none.
     */
    public record ClusterView(String self, int clusterPort, long version, boolean known, List<MemberView> members,
            List<ZoneMembers> zones, RepairProgress.Snapshot repair, RepairProgress.Snapshot movement, Progress restore) {
    }

    /** What {@link NodeInfoClient} reads: the node's name on the ring and the port it answers peers on. */
    public record SelfView(String self, int clusterPort) {
    }

    private final ClusterMembership membership;
    private final PeerMonitors monitors;
    private final DnsDiscovery discovery;
    private final int clusterPort;
    private final RepairScheduler repairScheduler;
    private final DataMovement dataMovement;
    private final Supplier<Optional<Progress>> restore;

    /**
     * @param discovery null with a static peer list
     * @param restore   this node's restore of a backup, if it ran one
     */
    ClusterHandler(ClusterMembership membership, PeerMonitors monitors, DnsDiscovery discovery, int clusterPort,
            RepairScheduler repairScheduler, DataMovement dataMovement, Supplier<Optional<Progress>> restore) {
        this.restore = restore;
        this.repairScheduler = repairScheduler;
        this.dataMovement = dataMovement;
        this.membership = membership;
        this.monitors = monitors;
        this.discovery = discovery;
        this.clusterPort = clusterPort;
    }

    /** {@code GET /v0/cluster/self}: the name and cluster port alone, what a peer needs to call this node. */
    Mono<ServerResponse> self(ServerRequest request) {
        return ServerResponse.ok().contentType(MediaType.APPLICATION_JSON)
                .bodyValue(new SelfView(membership.self(), clusterPort));
    }

    Mono<ServerResponse> view(ServerRequest request) {
        var view = membership.view();
        // Read once: the zones count the states the members show.
        Map<String, PeerState> states = view.ring().names().stream()
                .collect(Collectors.toMap(name -> name, name -> monitors.stateOf(name, membership.self())));
        List<MemberView> members = view.ring().members().stream()
                .map(member -> new MemberView(member.name(), addressOf(member.name()), states.get(member.name()),
                        membership.state(member.name()), member.zone().orElse(null)))
                .toList();
        List<ZoneMembers> zones = ZoneSpread.members(view.ring(), member -> states.get(member) == PeerState.UP);
        return ServerResponse.ok().contentType(MediaType.APPLICATION_JSON)
                .bodyValue(new ClusterView(membership.self(), clusterPort, view.version(), membership.isKnown(), members, zones,
                        repairScheduler.status().running(), dataMovement.running(), restore.get().orElse(null)));
    }

    /** Where discovery last found the member, or else the host of its name. */
    private String addressOf(String name) {
        String discovered = discovery == null ? null : discovery.addressOf(name);
        return discovered != null ? discovered : URI.create(name).getHost();
    }
}
