package io.ringkv.replication;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.ringkv.replication.ReplicaWindow.Lane;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

class ReplicaWindowTest {

    /** A call in flight until the test ends it. */
    private static final class Call {
        final Sinks.One<String> answer = Sinks.one();
        boolean made;
        boolean admitted;
        String result;
        Disposable subscription;

        Call start(ReplicaWindow window, long size, Lane lane) {
            subscription = window.call(size, lane, () -> admitted = true, () -> {
                made = true;
                return answer.asMono();
            }).subscribe(value -> result = value);
            return this;
        }

        void end() {
            answer.tryEmitValue("done");
        }
    }

    private static List<Call> start(ReplicaWindow window, int count, long size, Lane lane) {
        List<Call> calls = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            calls.add(new Call().start(window, size, lane));
        }
        return calls;
    }

    @Test
    void callsBeyondTheWindowWaitAndGetInInOrderAsPlacesFree() {
        ReplicaWindow window = new ReplicaWindow(2, 1_000_000);
        List<Call> calls = start(window, 4, 10, Lane.FOREGROUND);

        assertThat(calls).extracting(call -> call.made).containsExactly(true, true, false, false);
        assertThat(calls).extracting(call -> call.admitted).containsExactly(true, true, false, false);
        assertThat(window.saturated()).isTrue();
        assertThat(window.waiting()).isEqualTo(2);

        calls.get(1).end();
        assertThat(calls.get(1).result).isEqualTo("done");
        assertThat(calls).extracting(call -> call.made).containsExactly(true, true, true, false);

        calls.get(0).end();
        calls.get(2).end();
        calls.get(3).end();
        assertThat(calls).extracting(call -> call.result).containsOnly("done");
        assertThat(window.callsInFlight()).isZero();
        assertThat(window.bytesInFlight()).isZero();
        assertThat(window.saturated()).isFalse();
    }

    @Test
    void bytesAreBoundedTooButACallAloneAlwaysGetsIn() {
        ReplicaWindow window = new ReplicaWindow(100, 1_000);
        Call large = new Call().start(window, 5_000, Lane.FOREGROUND);
        assertThat(large.made).as("alone, larger than the window").isTrue();
        Call small = new Call().start(window, 10, Lane.FOREGROUND);
        assertThat(small.made).as("no room beside it").isFalse();
        large.end();
        assertThat(small.made).isTrue();
        assertThat(window.bytesInFlight()).isEqualTo(10);
    }

    @Test
    void backgroundCallsYieldToClientsButNeverStarve() {
        ReplicaWindow window = new ReplicaWindow(4, 1_000_000);
        Call first = new Call().start(window, 1, Lane.BACKGROUND);
        Call second = new Call().start(window, 1, Lane.BACKGROUND);
        Call third = new Call().start(window, 1, Lane.BACKGROUND);
        assertThat(first.made).isTrue();
        assertThat(second.made).as("two of four: half the window").isTrue();
        assertThat(third.made).as("background gets at most half").isFalse();

        List<Call> clients = start(window, 3, 1, Lane.FOREGROUND);
        assertThat(clients).extracting(call -> call.made).containsExactly(true, true, false);

        first.end();
        assertThat(clients.get(2).made).as("a freed place goes to the waiting client first").isTrue();
        assertThat(third.made).isFalse();

        second.end();
        assertThat(third.made).as("no background call in flight: one may always go").isTrue();
        assertThat(window.callsInFlight()).isEqualTo(4);
    }

    @Test
    void aCallCancelledWhileItWaitsLeavesTheLineAndOneCancelledInFlightGivesItsPlaceBack() {
        ReplicaWindow window = new ReplicaWindow(1, 1_000_000);
        Call running = new Call().start(window, 1, Lane.FOREGROUND);
        Call cancelled = new Call().start(window, 1, Lane.FOREGROUND);
        Call next = new Call().start(window, 1, Lane.FOREGROUND);
        cancelled.subscription.dispose();
        assertThat(window.waiting()).isEqualTo(1);

        running.subscription.dispose();
        assertThat(cancelled.made).isFalse();
        assertThat(next.made).as("the cancelled call's turn and the running one's place").isTrue();
        next.end();
        assertThat(window.callsInFlight()).isZero();
    }

    @Test
    void aFailedCallGivesItsPlaceBack() {
        ReplicaWindow window = new ReplicaWindow(1, 1_000_000);
        List<Throwable> errors = new ArrayList<>();
        window.call(1, Lane.FOREGROUND, () -> Mono.<String>error(new IllegalStateException("down")))
                .subscribe(value -> { }, errors::add);
        assertThat(errors).hasSize(1);
        assertThat(window.callsInFlight()).isZero();
        Call after = new Call().start(window, 1, Lane.FOREGROUND);
        assertThat(after.made).isTrue();
    }
}
