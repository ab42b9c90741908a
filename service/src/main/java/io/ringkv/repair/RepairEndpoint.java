package io.ringkv.repair;

import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.lang.Nullable;


/**
 * {@code /actuator/repair}: where convergence stands on this node, and a way to ask for a repair
 * now instead of at the next interval. {@code GET} shows the repair running (with its progress),
 * the last ones, when each peer was last repaired and is next due, and the hints waiting per peer;
 * {@code POST} (optionally {@code {"peer": "http://..."}}) repairs with that peer, or all of them,
 * as soon as they take calls.
 */
@Endpoint(id = "repair")
public class RepairEndpoint {

    /** What {@code GET} answers. */
    public record Report(RepairScheduler.Status repair, Map<String, Long> hintsPending) {
    }

    /** What {@code POST} answers. */
    public record Requested(Set<String> peers) {
    }

    private final RepairScheduler repairScheduler;
    private final Supplier<Map<String, Long>> hintsPending;

    /** @param hintsPending the hints waiting now, by peer (hinted hand-off's own count) */
    public RepairEndpoint(RepairScheduler repairScheduler, Supplier<Map<String, Long>> hintsPending) {
        this.repairScheduler = repairScheduler;
        this.hintsPending = hintsPending;
    }

    @ReadOperation
    public Report report() {
        return new Report(repairScheduler.status(), hintsPending.get());
    }

    @WriteOperation
    public Requested repair(@Nullable String peer) {
        try {
            return new Requested(repairScheduler.requestRepair(peer));
        } catch (IllegalArgumentException notAPeer) {
            // Actuator answers this one with 400 and its reason.
            throw new InvalidEndpointRequestException(notAPeer.getMessage(), notAPeer.getMessage());
        }
    }
}
