package io.ringkv.health;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.ringkv.peer.wire.PeerException;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * A peer whose breaker is open is skipped cheaply: calls are refused without reaching it, and the
 * refusal carries no stack trace (filling one in for every request that skips a down peer costs
 * more CPU than a replica call).
 */
class OpenBreakerTest {

    private static final BreakerSettings BREAKER = new BreakerSettings(10, 5, 50, Duration.ofSeconds(5), 100,
            Duration.ofMinutes(1), 1);

    private final PeerMonitor monitor = new PeerMonitor("http://peer:8080", BREAKER, new SimpleMeterRegistry());

    @Test
    void callsToAPeerWithAnOpenBreakerAreRefusedWithoutAStackTrace() {
        for (int i = 0; i < 5; i++) {
            monitor.guard("read", Mono.error(new PeerException.Unavailable("http://peer:8080", "connection refused")))
                    .onErrorResume(error -> Mono.empty()).block();
        }
        assertThat(monitor.state()).isEqualTo(PeerState.DOWN);

        boolean[] called = {false};
        StepVerifier.create(monitor.guard("read", Mono.fromCallable(() -> called[0] = true)))
                .expectErrorSatisfies(error -> assertThat(error)
                        .isInstanceOf(CallNotPermittedException.class)
                        .satisfies(refusal -> assertThat(refusal.getStackTrace()).isEmpty()))
                .verify();
        assertThat(called[0]).isFalse();
    }
}
