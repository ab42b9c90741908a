package io.ringkv.health;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.ringkv.peer.wire.PeerException;
import io.ringkv.peer.wire.Wire;
import org.junit.jupiter.api.Test;

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
    void countsPeerTroubleButNotThisNodesOwnMistakesAgainstAPeer() {
        assertThat(PeerMonitor.isPeerFailure(new java.util.concurrent.TimeoutException())).isTrue();
        assertThat(PeerMonitor.isPeerFailure(new PeerException.Unavailable("p", "connection refused"))).isTrue();
        assertThat(PeerMonitor.isPeerFailure(new PeerException.Refused("p", "wrong secret"))).isTrue();
        assertThat(PeerMonitor.isPeerFailure(new PeerException.Remote("p", Wire.ErrorCode.OVERLOADED, "busy"))).isTrue();
        assertThat(PeerMonitor.isPeerFailure(new PeerException.Remote("p", Wire.ErrorCode.STORAGE, "closing"))).isTrue();
        assertThat(PeerMonitor.isPeerFailure(new PeerException.Remote("p", Wire.ErrorCode.BAD_REQUEST, "malformed"))).isFalse();
        assertThat(PeerMonitor.isPeerFailure(new PeerException.Remote("p", Wire.ErrorCode.UNKNOWN_MESSAGE, "older"))).isFalse();
    }
}
