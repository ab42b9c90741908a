package io.ringkv.backup;

import java.io.IOException;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Optional;

import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.lang.Nullable;

import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * {@code /actuator/restore}: {@code POST {"from": "<backup id>", "asOf": "<ISO-8601 instant>"}}
 * restores that backup into this cluster, as of that time if given ({@link Restore}): 202 with its
 * progress; 400 for a backup that does not exist or is incomplete, or a malformed time; 409 while
 * one runs on this node. {@code GET} shows the last or current restore on this node.
 */
@Endpoint(id = "restore")
public class RestoreEndpoint {

    private final Restore restore;
    private final Scheduler blocking;

    /** @param restore null when no backup store is configured */
    public RestoreEndpoint(Restore restore, Scheduler blocking) {
        this.restore = restore;
        this.blocking = blocking;
    }

    @ReadOperation
    public WebEndpointResponse<Object> progress() {
        if (restore == null) {
            return new WebEndpointResponse<>(new BackupEndpoint.Refused(BackupEndpoint.NOT_CONFIGURED), 409);
        }
        return new WebEndpointResponse<>(restore.progress().orElse(null), WebEndpointResponse.STATUS_OK);
    }

    @WriteOperation
    public Mono<WebEndpointResponse<Object>> start(String from, @Nullable String asOf) {
        if (restore == null) {
            return Mono.just(new WebEndpointResponse<>(new BackupEndpoint.Refused(BackupEndpoint.NOT_CONFIGURED), 409));
        }
        Optional<Instant> pointInTime;
        try {
            pointInTime = asOf == null ? Optional.empty() : Optional.of(Instant.parse(asOf));
        } catch (DateTimeParseException e) {
            return Mono.just(refused("asOf is not an ISO-8601 instant such as 2026-11-29T16:30:00Z: " + asOf, 400));
        }
        return Mono.fromCallable(() -> {
            try {
                return new WebEndpointResponse<Object>(restore.start(from, pointInTime), 202);
            } catch (IllegalArgumentException e) {
                return refused(e.getMessage(), 400);
            } catch (IllegalStateException e) {
                return refused(e.getMessage(), 409);
            } catch (IOException e) {
                return refused("the backup store failed: " + e.getMessage(), 503);
            }
        }).subscribeOn(blocking);
    }

    private static WebEndpointResponse<Object> refused(String reason, int status) {
        return new WebEndpointResponse<>(new BackupEndpoint.Refused(reason), status);
    }
}
