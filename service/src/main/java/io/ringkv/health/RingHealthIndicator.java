package io.ringkv.health;

import java.util.LinkedHashMap;
import java.util.Map;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

import io.ringkv.ring.ClusterMembership;

/**
 * The {@code ring} health contributor: UP as soon as this node knows a ring (with DNS discovery:
 * after the bootstrap gate) and holds its ranges (a joining node is DOWN until it has pulled them,
 * so a Service sends it no clients and {@code helm upgrade --wait} waits for the data), with every
 * member's state in the details. A sick peer shows in the details but never makes this contributor DOWN:
 * readiness includes it, and one bad pod must not take the healthy ones out of the Service.
 */
public final class RingHealthIndicator extends AbstractHealthIndicator {

    private final ClusterMembership membership;
    private final PeerMonitors monitors;

    public RingHealthIndicator(ClusterMembership membership, PeerMonitors monitors) {
        super("ring health check failed");
        this.membership = membership;
        this.monitors = monitors;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        if (!membership.isKnown()) {
            builder.down().withDetail("self", membership.self()).withDetail("reason", "discovery has not completed a round yet");
            return;
        }
        if (membership.zoneToMoveTo().isPresent()) {
            // Not ready until it has moved: a rolling update that sets new zones moves one node at a time.
            builder.down().withDetail("self", membership.self()).withDetail("reason", "moving to zone '"
                    + membership.zoneToMoveTo().get() + "': handing its data to the next owners first");
            return;
        }
        if (!membership.state(membership.self()).holdsData()) {
            builder.down().withDetail("self", membership.self())
                    .withDetail("reason", "joining: pulling the ranges it will own from their current owners");
            return;
        }
        var view = membership.view();
        var ring = view.ring();
        Map<String, Object> members = new LinkedHashMap<>();
        for (String member : ring.names()) {
            Map<String, Object> details = new LinkedHashMap<>();
            if (member.equals(membership.self())) {
                details.put("state", PeerState.UP);
                details.put("self", true);
            } else {
                PeerMonitor monitor = monitors.of(member);
                details.put("state", monitor.state());
                details.put("lastSuccess", monitor.lastSuccess() == null ? "never" : monitor.lastSuccess().toString());
                details.put("breaker", monitor.breakerState().name());
                monitor.lastFailure().ifPresent(reason -> details.put("lastFailure", reason));
            }
            members.put(member, details);
        }
        builder.up()
                .withDetail("self", membership.self())
                .withDetail("version", view.version())
                .withDetail("size", ring.size())
                .withDetail("members", members);
    }
}
