package io.ringkv.health;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.ringkv.peer.wire.PeerException;
import reactor.core.publisher.Mono;

/**
 * A peer that refuses this node's cluster secret: down, with the reason, in health and metrics;
 * the log says so once per episode, not once per call.
 */
class PeerRefusalTest {

    private static final BreakerSettings BREAKER = new BreakerSettings(10, 5, 50, Duration.ofSeconds(5), 100,
            Duration.ofMinutes(1), 1);

    private final Logger logger = (Logger) LoggerFactory.getLogger(PeerMonitor.class);
    private final ListAppender<ILoggingEvent> logged = new ListAppender<>();
    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private final PeerMonitor monitor = new PeerMonitor("http://peer:8080", BREAKER, meters);

    @BeforeEach
    void captureTheLog() {
        logged.start();
        logger.addAppender(logged);
    }

    @AfterEach
    void releaseTheLog() {
        logger.detachAppender(logged);
    }

    private void refusedCall() {
        monitor.guard("read", Mono.error(new PeerException.Refused("http://peer:8080", "wrong secret")))
                .onErrorResume(error -> Mono.empty()).block();
    }

    private List<String> warnings() {
        return logged.list.stream().filter(event -> event.getLevel() == Level.WARN).map(ILoggingEvent::getFormattedMessage).toList();
    }

    @Test
    void aRefusingPeerIsDownWithTheReasonCountedAndLoggedOnce() {
        for (int i = 0; i < 5; i++) {
            refusedCall();
        }
        assertThat(monitor.state()).isEqualTo(PeerState.DOWN);
        assertThat(monitor.lastFailure()).hasValueSatisfying(reason -> assertThat(reason).contains("refused: wrong secret"));
        assertThat(meters.get("ringkv.replica.refused").tag("peer", "http://peer:8080").counter().count()).isEqualTo(5);
        assertThat(warnings()).singleElement().asString().contains("peer http://peer:8080 refused this node", "wrong secret");
    }

    @Test
    void aPeerThatAcceptsAgainAndThenRefusesIsLoggedAgain() {
        refusedCall();
        refusedCall();
        monitor.guard("read", Mono.just("ok")).block();
        refusedCall();
        assertThat(warnings()).hasSize(2);
    }
}
