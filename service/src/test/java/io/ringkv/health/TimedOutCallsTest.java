package io.ringkv.health;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.ringkv.peer.wire.PeerException;
import reactor.core.publisher.Mono;

/**
 * A call that timed out on a live connection ({@link PeerException.TimedOut}) says the peer is
 * busy, not sick: it neither opens the peer's breaker nor counts as a success, but reads learn
 * that the peer keeps them waiting. When every node shares one saturated disk all peers time out
 * at once, and counting that as failure opened every breaker and refused what would have been
 * answered a moment later.
 */
class TimedOutCallsTest {

    private static final String PEER = "http://peer:8080";
    private static final BreakerSettings BREAKER = new BreakerSettings(10, 5, 50, Duration.ofSeconds(5), 100,
            Duration.ofMinutes(1), 1);

    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private final PeerMonitor monitor = new PeerMonitor(PEER, BREAKER, meters);

    @Test
    void timeoutsOnALiveConnectionLeaveTheBreakerClosedButMakeThePeerLookSlow() {
        succeed(5);
        double before = monitor.expectedLatencyMillis();
        for (int i = 0; i < 20; i++) {
            call(Mono.delay(Duration.ofMillis(20)).then(Mono.error(new PeerException.TimedOut(PEER, "no answer within PT1S"))));
        }
        assertThat(monitor.breakerState()).isEqualTo(CircuitBreaker.State.CLOSED);
        assertThat(monitor.state()).isEqualTo(PeerState.UP);
        assertThat(monitor.expectedLatencyMillis()).as("a read prefers a replica that answers").isGreaterThan(before + 10);
        assertThat(meters.get("ringkv.replica.calls").tag("outcome", "timeout").timer().count()).isEqualTo(20);
    }

    @Test
    void timeoutsDoNotDiluteFailures() {
        for (int i = 0; i < 20; i++) {
            call(Mono.error(new PeerException.TimedOut(PEER, "no answer within PT1S")));
        }
        for (int i = 0; i < 5; i++) {
            call(Mono.error(new PeerException.Unavailable(PEER, "the connection closed")));
        }
        assertThat(monitor.breakerState()).as("five failures of five counted calls").isEqualTo(CircuitBreaker.State.OPEN);
        assertThat(monitor.state()).isEqualTo(PeerState.DOWN);
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
