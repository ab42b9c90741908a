package io.ringkv.conditional;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.Test;

import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/** Requests under consensus take turns per key on a node: in order, one at a time, and never stuck behind a cancelled one. */
class KeyTurnsTest {

    private static final byte[] KEY = "k".getBytes(StandardCharsets.UTF_8);
    private final KeyTurns turns = new KeyTurns();
    private final List<String> started = new CopyOnWriteArrayList<>();

    private Mono<String> work(String name, Sinks.One<String> end) {
        return Mono.defer(() -> {
            started.add(name);
            return end.asMono();
        });
    }

    @Test
    void aKeysRequestsRunOneAfterAnotherInOrder() {
        Sinks.One<String> first = Sinks.one();
        Sinks.One<String> second = Sinks.one();
        Mono<String> a = turns.inTurn(KEY, () -> work("a", first)).cache();
        Mono<String> b = turns.inTurn(KEY, () -> work("b", second)).cache();
        a.subscribe();
        b.subscribe();
        assertThat(started).containsExactly("a");
        first.tryEmitValue("a done");
        assertThat(started).containsExactly("a", "b");
        second.tryEmitValue("b done");
        assertThat(b.block(Duration.ofSeconds(1))).isEqualTo("b done");
    }

    @Test
    void otherKeysDoNotWait() {
        Sinks.One<String> first = Sinks.one();
        turns.inTurn(KEY, () -> work("a", first)).subscribe();
        turns.inTurn("other".getBytes(StandardCharsets.UTF_8), () -> work("other", Sinks.one())).subscribe();
        assertThat(started).containsExactly("a", "other");
    }

    @Test
    void aCancelledRequestGivesUpItsTurn() {
        Disposable waiting = turns.inTurn(KEY, () -> work("a", Sinks.one())).subscribe();
        turns.inTurn(KEY, () -> work("b", Sinks.one())).subscribe();
        assertThat(started).containsExactly("a");
        waiting.dispose(); // its client left
        assertThat(started).containsExactly("a", "b");
    }

    @Test
    void aRequestCancelledInTheQueueDoesNotLetTheNextOneRunBesideTheFirst() {
        Sinks.One<String> first = Sinks.one();
        turns.inTurn(KEY, () -> work("a", first)).subscribe();
        Disposable second = turns.inTurn(KEY, () -> work("b", Sinks.one())).subscribe();
        turns.inTurn(KEY, () -> work("c", Sinks.one())).subscribe();
        second.dispose();
        assertThat(started).containsExactly("a");
        first.tryEmitValue("a done");
        assertThat(started).containsExactly("a", "c");
    }
}
