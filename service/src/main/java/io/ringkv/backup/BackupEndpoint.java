package io.ringkv.backup;

import java.io.IOException;
import java.io.UncheckedIOException;

import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;

import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * {@code /actuator/backup}: {@code POST} backs up the whole cluster now (every member's snapshot,
 * uploaded in the background: 202 with the backup's id, and the members that could not take
 * part); {@code GET} lists the backups in the store, whether each is complete, the newest complete
 * one, and this node's part in the last. 409 when no backup store is configured.
 */
@Endpoint(id = "backup")
public class BackupEndpoint {

    /** Why nothing was done. */
    public record Refused(String reason) {
    }

    static final String NOT_CONFIGURED = "no backup store is configured on this node (ringkv.backup.target)";

    private final ClusterBackup backups;
    private final Scheduler blocking;

    /** @param backups null when no backup store is configured; @param blocking where store and peer calls may block */
    public BackupEndpoint(ClusterBackup backups, Scheduler blocking) {
        this.backups = backups;
        this.blocking = blocking;
    }

    @ReadOperation
    public Mono<WebEndpointResponse<Object>> report() {
        return answer(() -> new WebEndpointResponse<>(backups.report(), WebEndpointResponse.STATUS_OK));
    }

    @WriteOperation
    public Mono<WebEndpointResponse<Object>> start() {
        return answer(() -> {
            try {
                return new WebEndpointResponse<>(backups.start(), 202);
            } catch (IllegalStateException sameSecond) {
                return new WebEndpointResponse<>(new Refused(sameSecond.getMessage()), 409);
            }
        });
    }

    interface StoreCall {
        WebEndpointResponse<Object> run() throws IOException;
    }

    private Mono<WebEndpointResponse<Object>> answer(StoreCall call) {
        if (backups == null) {
            return Mono.just(new WebEndpointResponse<>(new Refused(NOT_CONFIGURED), 409));
        }
        return Mono.fromCallable(() -> {
            try {
                return call.run();
            } catch (IOException | UncheckedIOException e) {
                return new WebEndpointResponse<Object>(new Refused("the backup store failed: " + e.getMessage()), 503);
            }
        }).subscribeOn(blocking);
    }
}
