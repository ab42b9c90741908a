package io.ringkv.replication;

import java.time.Duration;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.web.server.context.WebServerGracefulShutdownLifecycle;

import io.ringkv.lifecycle.ShutdownWait;

/**
 * The shutdown wait for replica calls in flight: lets the replica calls still running end before the peer connections and the store
 * close. A write is answered once {@code ack} replicas have it; the slower replicas' calls go on,
 * and one that fails is hinted. Closing under them would drop those copies without a hint.
 *
 * <p>Stops just after the web server's graceful shutdown, when no client request can start a new
 * call; each call ends within the replication timeout (a peer's) or its storage write (our own).
 */
public final class InFlightReplicaCalls extends ShutdownWait {

    private static final Logger log = LoggerFactory.getLogger(InFlightReplicaCalls.class);

    private final Coordinator coordinator;
    private final Duration bound;

    /** @param bound how long to wait at most: more than the replication timeout */
    public InFlightReplicaCalls(Coordinator coordinator, Duration bound) {
        this.coordinator = coordinator;
        this.bound = bound;
    }

    @Override
    protected void awaitEnd() throws InterruptedException {
        int pending = coordinator.callsInFlight();
        if (pending == 0) {
            return;
        }
        log.info("shutdown: waiting for {} replica calls to end (at most {} ms)", pending, bound.toMillis());
        if (!coordinator.awaitCallsEnded(bound)) {
            log.warn("shutdown: {} replica calls still running after {} ms; their replicas rely on repair",
                    coordinator.callsInFlight(), bound.toMillis());
        }
    }

    @Override
    public int getPhase() {
        return WebServerGracefulShutdownLifecycle.SMART_LIFECYCLE_PHASE - 1;
    }
}
