package io.ringkv.health;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.http.HttpStatus;
import org.springframework.web.reactive.function.client.WebClientResponseException;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;

class PeerStateTest {

    @Test
    void followsTheBreakerAndTheLatestCall() {
        assertThat(PeerState.of(CircuitBreaker.State.CLOSED, false)).isEqualTo(PeerState.UP);
        assertThat(PeerState.of(CircuitBreaker.State.CLOSED, true)).isEqualTo(PeerState.SUSPECT);
        assertThat(PeerState.of(CircuitBreaker.State.HALF_OPEN, false)).isEqualTo(PeerState.SUSPECT);
        assertThat(PeerState.of(CircuitBreaker.State.OPEN, false)).isEqualTo(PeerState.DOWN);
        assertThat(PeerState.of(CircuitBreaker.State.FORCED_OPEN, true)).isEqualTo(PeerState.DOWN);
    }

    @Test
    void countsServerErrorsAndTimeoutsButNotClientErrorsAgainstAPeer() {
        assertThat(PeerMonitor.isPeerFailure(new java.util.concurrent.TimeoutException())).isTrue();
        assertThat(PeerMonitor.isPeerFailure(WebClientResponseException.create(HttpStatus.SERVICE_UNAVAILABLE, "x", null, null, null, null))).isTrue();
        assertThat(PeerMonitor.isPeerFailure(WebClientResponseException.create(HttpStatus.BAD_REQUEST, "x", null, null, null, null))).isFalse();
    }
}
