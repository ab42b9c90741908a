package io.ringkv.handover;

import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;

/**
 * {@code /actuator/cleanup}: drops what this node keeps for ranges it no longer owns, once nodes
 * have joined ({@link Cleanup}). {@code POST} starts it (409 with the reason while data moves, or
 * while one runs); {@code GET} shows where it stands: keys looked at and dropped so far.
 */
@Endpoint(id = "cleanup")
public class CleanupEndpoint {

    /** Why a cleanup was not started. */
    public record Refused(String reason) {
    }

    private final Cleanup cleanup;

    public CleanupEndpoint(Cleanup cleanup) {
        this.cleanup = cleanup;
    }

    @ReadOperation
    public Cleanup.Status status() {
        return cleanup.status();
    }

    @WriteOperation
    public WebEndpointResponse<Object> start() {
        try {
            return new WebEndpointResponse<>(cleanup.start(), WebEndpointResponse.STATUS_OK);
        } catch (IllegalStateException notNow) {
            return new WebEndpointResponse<>(new Refused(notNow.getMessage()), 409);
        }
    }
}
