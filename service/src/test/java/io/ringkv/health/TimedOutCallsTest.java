package io.ringkv.health;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.ringkv.peer.wire.PeerException;
import reactor.core.publisher.Mono;

/**
 * A call that timed out on a live connection ({@link PeerException.TimedOut}) from a peer that still
 * answers others says it is busy, not sick: it neither opens the peer's breaker nor counts as a
 * success, but reads learn that the peer keeps them waiting. When every node shares one saturated
 * disk all peers time out at once, and counting that as failure opened every breaker and refused
 * what would have been answered a moment later. A peer that answers nothing at all is stuck: its
 * timeouts count.
 */
class TimedOutCallsTest {

    private static final String PEER = "http://peer:8080";
    private static final BreakerSettings BREAKER = new BreakerSettings(10, 5, 50, Duration.ofSeconds(5), 100,
            Duration.ofMinutes(1), 1);

    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private final PeerMonitor monitor = new PeerMonitor(PEER, BREAKER, meters);

    @Test
    void timeoutsOfAPeerThatAnswersOthersLeaveTheBreakerClosedButMakeThePeerLookSlow() {
        succeed(5);
        double before = monitor.expectedLatencyMillis();
        for (int i = 0; i < 20; i++) {
            call(Mono.delay(Duration.ofMillis(20)).then(timedOut()));
        }
        assertThat(monitor.breakerState()).isEqualTo(CircuitBreaker.State.CLOSED);
        assertThat(monitor.state()).isEqualTo(PeerState.UP);
        assertThat(monitor.expectedLatencyMillis()).as("a read prefers a replica that answers").isGreaterThan(before + 10);
        assertThat(meters.get("ringkv.replica.calls").tag("outcome", "timeout").timer().count()).isEqualTo(20);
    }

    @Test
    void excusedTimeoutsDoNotCountAsSuccesses() {
        succeed(1);
        for (int i = 0; i < 20; i++) {
            call(timedOut());
        }
        for (int i = 0; i < 4; i++) {
            call(Mono.error(new PeerException.Unavailable(PEER, "the connection closed")));
        }
        // Counted as successes, the timeouts would leave 4 failures in a window of 10: closed.
        assertThat(monitor.breakerState()).as("four failures of five counted calls").isEqualTo(CircuitBreaker.State.OPEN);
        assertThat(monitor.state()).isEqualTo(PeerState.DOWN);
    }

    @Test
    void aPeerThatAnswersNothingHasItsTimeoutsCounted() {
        for (int i = 0; i < 5; i++) {
            call(timedOut());
        }
        assertThat(monitor.breakerState()).as("a stuck store behind a connection that answers pings").isEqualTo(CircuitBreaker.State.OPEN);
        assertThat(monitor.lastFailure()).hasValueSatisfying(reason -> assertThat(reason).contains("no answer within"));
    }

    private static Mono<Boolean> timedOut() {
        return Mono.error(new PeerException.TimedOut(PEER, "no answer within PT1S"));
    }

    private void succeed(int calls) {
        for (int i = 0; i < calls; i++) {
            call(Mono.just(true));
        }
    }

    private void call(Mono<Boolean> outcome) {
        monitor.guard("read", outcome).onErrorResume(error -> Mono.empty()).block(Duration.ofSeconds(5));
    }
}
