package io.ringkv.conditional;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

import io.ringkv.paxos.Ballot;
import io.ringkv.replication.Deadlines;
import io.ringkv.replication.Replica;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;

/**
 * One phase of a Paxos round (prepare, accept or commit): the same call to every replica of the
 * key at once, decided as soon as {@code required} of them granted it. Calls still running then
 * are not cancelled: a slower replica still gets its accept or its commit.
 *
 * <p>Fails with {@link NotGranted}: {@link Preempted} when refusals leave too few replicas to
 * grant it (another coordinator's higher ballot: the round is retried under a higher one), else
 * when failures or the timeout do. Either way the round is tried again, until its request's deadline.
 */
final class Phase {

    /** A replica's answer that granted the call. */
    record Granted<T>(Replica replica, T answer) {
    }

    /** Too few replicas granted the call: they failed, did not answer in time, or refused it. */
    static class NotGranted extends RuntimeException {
        NotGranted(String message) {
            super(message, null, false, false);
        }
    }

    /** A higher ballot was promised by too many replicas for this round to go on. */
    static final class Preempted extends NotGranted {
        private final Ballot promised;

        Preempted(Ballot promised) {
            super("preempted by ballot " + promised);
            this.promised = promised;
        }

        Ballot promised() {
            return promised;
        }
    }

    private Phase() {
    }

    /**
     * @param refusal the higher ballot a replica's answer refused the call for; empty when it granted it
     */
    static <T> Mono<List<Granted<T>>> run(String name, List<Replica> replicas, int required, Duration timeout,
            Function<Replica, Mono<T>> call, Function<T, Optional<Ballot>> refusal) {
        return Mono.create(sink -> {
            Tally<T> tally = new Tally<>(name, replicas.size(), required);
            Disposable deadline = Deadlines.after(timeout, () -> tally.expire().ifPresent(sink::error));
            sink.onDispose(deadline);
            for (Replica replica : replicas) {
                call.apply(replica).subscribe(answer -> {
                    Optional<Ballot> refused = refusal.apply(answer);
                    tally.answered(replica, answer, refused.orElse(null)).ifPresent(decided -> decided.emit(sink));
                }, error -> tally.failed().ifPresent(decided -> decided.emit(sink)));
            }
        });
    }

    /** What a phase's sink is told once decided. */
    private record Decision<T>(List<Granted<T>> granted, RuntimeException failure) {
        void emit(reactor.core.publisher.MonoSink<List<Granted<T>>> sink) {
            if (failure == null) {
                sink.success(granted);
            } else {
                sink.error(failure);
            }
        }
    }

    /** The answers so far; decides once, whoever answers last. */
    private static final class Tally<T> {
        private final String name;
        private final int replicas;
        private final int required;
        private final List<Granted<T>> granted = new ArrayList<>();
        private int refusedOrFailed;
        private Ballot highestRefusal;
        private boolean decided;

        Tally(String name, int replicas, int required) {
            this.name = name;
            this.replicas = replicas;
            this.required = required;
        }

        synchronized Optional<Decision<T>> answered(Replica replica, T answer, Ballot refusedFor) {
            if (decided) {
                return Optional.empty();
            }
            if (refusedFor == null) {
                granted.add(new Granted<>(replica, answer));
                if (granted.size() == required) {
                    decided = true;
                    return Optional.of(new Decision<>(List.copyOf(granted), null));
                }
                return Optional.empty();
            }
            if (highestRefusal == null || refusedFor.isAfter(highestRefusal)) {
                highestRefusal = refusedFor;
            }
            return notGranted();
        }

        synchronized Optional<Decision<T>> failed() {
            return decided ? Optional.empty() : notGranted();
        }

        private Optional<Decision<T>> notGranted() {
            refusedOrFailed++;
            if (replicas - refusedOrFailed >= required) {
                return Optional.empty();
            }
            decided = true;
            return Optional.of(new Decision<>(null, failure("answered")));
        }

        synchronized Optional<RuntimeException> expire() {
            if (decided) {
                return Optional.empty();
            }
            decided = true;
            return Optional.of(failure("answered in time"));
        }

        private RuntimeException failure(String how) {
            if (highestRefusal != null) {
                return new Preempted(highestRefusal);
            }
            return new NotGranted(name + ": fewer than " + required + " of " + replicas + " replicas " + how);
        }
    }
}
