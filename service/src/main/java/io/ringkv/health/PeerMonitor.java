package io.ringkv.health;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.reactor.circuitbreaker.operator.CircuitBreakerOperator;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.ringkv.peer.wire.PeerException;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Watches one peer: every call to it passes through its circuit breaker, which stops calls to a
 * peer that fails or is slow, so that requests needing it fail at once instead of after the
 * timeout, and lets a few probe calls through later so that a healed peer returns by itself.
 */
public final class PeerMonitor {

    private static final Logger log = LoggerFactory.getLogger(PeerMonitor.class);

    private final String peer;
    private final CircuitBreaker breaker;
    private final AtomicReference<Instant> lastSuccess = new AtomicReference<>();
    /** Why the last call failed, as health shows it; null once a call succeeds again. */
    private final AtomicReference<String> lastFailure = new AtomicReference<>();
    private final Counter refusals;
    /** Whether the peer's refusal was logged since it last answered: the log says so once, the counter counts. */
    private final AtomicBoolean refusalLogged = new AtomicBoolean();
    /** Weight 0.2: a peer that turns slow is passed over by reads within a handful of calls. */
    private final LatencyEstimate latency = new LatencyEstimate(0.2);

    private final MeterRegistry meters;
    private final Map<String, Timer> callTimers = new ConcurrentHashMap<>();
    /** How long a peer that answers nothing has its timeouts excused: as long as an open breaker keeps it away. */
    private final Duration busyGrace;

    public PeerMonitor(String peer, BreakerSettings settings, MeterRegistry meters) {
        this.peer = peer;
        this.meters = meters;
        this.busyGrace = settings.openFor();
        this.breaker = CircuitBreaker.of("peer " + peer, CircuitBreakerConfig.custom()
                .slidingWindowType(CircuitBreakerConfig.SlidingWindowType.COUNT_BASED)
                // Calls complete on event loops, several at once: the default window is a
                // synchronized block, where one loop would park while another records.
                .slidingWindowSynchronizationStrategy(CircuitBreakerConfig.SlidingWindowSynchronizationStrategy.LOCK_FREE)
                .slidingWindowSize(settings.windowSize())
                .minimumNumberOfCalls(settings.minimumCalls())
                .failureRateThreshold(settings.failureRatePercent())
                .slowCallDurationThreshold(settings.slowCallThreshold())
                .slowCallRateThreshold(settings.slowCallRatePercent())
                .waitDurationInOpenState(settings.openFor())
                .permittedNumberOfCallsInHalfOpenState(settings.probeCalls())
                // Show HALF_OPEN in health when the wait is over, not only at the next call.
                .automaticTransitionFromOpenToHalfOpenEnabled(true)
                // A request the peer found malformed is this node's mistake, not a sick peer.
                .recordException(PeerMonitor::isPeerFailure)
                // A request that timed out while the peer answers others is neither: when every
                // node shares one busy disk, all peers answer late at once, and counting that as
                // failure opened every breaker and refused what they would have answered a moment later.
                .ignoreException(this::busyNotSick)
                // While a peer is down, every request that would have asked it is refused with a
                // CallNotPermittedException: its stack trace would be filled in on the event loop
                // for every such request, and nobody reads it.
                .writableStackTraceEnabled(false)
                .build());
        Gauge.builder("ringkv.replica.breaker.state", breaker, PeerMonitor::breakerLevel)
                .description("The peer's circuit breaker: 0 closed, 1 half-open, 2 open")
                .tag("peer", peer)
                .register(meters);
        this.refusals = Counter.builder("ringkv.replica.refused")
                .description("Connections to the peer that it refused: it does not share this node's cluster secret")
                .tag("peer", peer)
                .register(meters);
    }

    private static double breakerLevel(CircuitBreaker breaker) {
        return switch (breaker.getState()) {
            case CLOSED, DISABLED, METRICS_ONLY -> 0;
            case HALF_OPEN -> 1;
            case OPEN, FORCED_OPEN -> 2;
        };
    }

    static boolean isPeerFailure(Throwable error) {
        return !(error instanceof PeerException peerError) || peerError.peerFailure();
    }

    /**
     * A call that timed out while the peer answered another within {@link #busyGrace}: it is busy,
     * and the breaker counts the timeout neither way. A peer whose store is stuck while its
     * connection still answers pings answers nothing: its timeouts count, and its breaker opens.
     */
    private boolean busyNotSick(Throwable error) {
        if (!(error instanceof PeerException.TimedOut)) {
            return false;
        }
        Instant answered = lastSuccess.get();
        return answered != null && Duration.between(answered, Instant.now()).compareTo(busyGrace) < 0;
    }

    /**
     * A point call to the peer, judged by the breaker and timed per operation and outcome; refused
     * at once while the breaker is open.
     */
    public <T> Mono<T> guard(String operation, Mono<T> call) {
        return Mono.defer(() -> {
            Timer.Sample sample = Timer.start(meters);
            return call
                    .doOnSuccess(ignored -> {
                        succeeded();
                        latency.record(sample.stop(callTimer(operation, "success")) / 1e6);
                    })
                    .doOnError(error -> {
                        boolean timedOut = error instanceof PeerException.TimedOut;
                        long nanos = sample.stop(callTimer(operation, timedOut ? "timeout" : "failure"));
                        if (timedOut) {
                            // As slow as the timeout at least: reads pass over a peer that keeps them waiting.
                            latency.record(nanos / 1e6);
                        }
                        if (!busyNotSick(error)) {
                            failed(error);
                        }
                    })
                    .transformDeferred(CircuitBreakerOperator.of(breaker))
                    .doOnError(CallNotPermittedException.class, rejected -> sample.stop(callTimer(operation, "rejected")));
        });
    }

    /** Looked up once per operation and outcome: building and registering a timer on every call costs CPU. */
    private Timer callTimer(String operation, String outcome) {
        return callTimers.computeIfAbsent(operation + '/' + outcome, ignored -> Timer.builder("ringkv.replica.calls")
                .description("Calls from this node to a peer's replica endpoints")
                .tags("peer", peer, "operation", operation, "outcome", outcome)
                .publishPercentileHistogram()
                .register(meters));
    }

    /**
     * A stream from the peer. It is refused while the breaker is open, but not judged by it: a long
     * range is not a slow peer.
     */
    public <T> Flux<T> guardStream(Flux<T> stream) {
        return Flux.defer(() -> breaker.getState() == CircuitBreaker.State.OPEN
                ? Flux.error(CallNotPermittedException.createCallNotPermittedException(breaker))
                : stream.doOnComplete(this::succeeded));
    }

    /**
     * The peer answered a call made around the breaker because it showed that it is back (it
     * connected to this node or pinged it): calls go to it again at once, not after the breaker's
     * open time and its probe calls. A node that restarts is thus used as soon as it serves.
     */
    public void readmit() {
        CircuitBreaker.State before = breaker.getState();
        if (before != CircuitBreaker.State.CLOSED) {
            breaker.transitionToClosedState();
            log.info("peer {} is back: calls to it resume (its breaker was {})", peer, before);
        }
        succeeded();
    }

    /** Whether the peer is anything but UP here: a sign of life from it is then worth a readmission. */
    public boolean shunned() {
        return state() != PeerState.UP;
    }

    private void succeeded() {
        lastSuccess.set(Instant.now());
        lastFailure.set(null);
        refusalLogged.set(false);
    }

    private void failed(Throwable error) {
        if (isPeerFailure(error)) {
            lastFailure.set(error.getMessage() != null ? error.getMessage() : error.toString());
            if (error instanceof PeerException.Refused) {
                refusals.increment();
                if (refusalLogged.compareAndSet(false, true)) {
                    log.warn("peer {} refused this node: {}; it counts as down until it accepts (further refusals are only "
                            + "counted, in ringkv_replica_refused_total)", peer, error.getMessage());
                }
            }
        }
    }

    public PeerState state() {
        return PeerState.of(breaker.getState(), lastFailure.get() != null);
    }

    /** Why the last call to the peer failed; empty once one has succeeded since. */
    public Optional<String> lastFailure() {
        return Optional.ofNullable(lastFailure.get());
    }

    /**
     * What a call to the peer is expected to take, in milliseconds: the recent average of its
     * successful calls, or infinity while its last call failed or its breaker is open.
     */
    public double expectedLatencyMillis() {
        return state() == PeerState.UP ? latency.millis() : Double.POSITIVE_INFINITY;
    }

    public CircuitBreaker.State breakerState() {
        return breaker.getState();
    }

    /** When a call to the peer last succeeded; null if none has. */
    public Instant lastSuccess() {
        return lastSuccess.get();
    }
}
