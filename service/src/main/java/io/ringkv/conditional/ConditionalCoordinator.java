package io.ringkv.conditional;

import java.security.SecureRandom;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.LongFunction;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.ringkv.paxos.Ballot;
import io.ringkv.paxos.Commit;
import io.ringkv.paxos.Promises;
import io.ringkv.paxos.Proposal;
import io.ringkv.record.HybridClock;
import io.ringkv.record.Record;
import io.ringkv.replication.Deadlines;
import io.ringkv.replication.NotEnoughReplicasException;
import io.ringkv.replication.Placement;
import io.ringkv.replication.Replica;
import io.ringkv.replication.ReplicationFactor;
import reactor.core.publisher.Mono;

/**
 * Coordinates the requests that need consensus on a key: conditional writes and deletes, and
 * linearizable reads. Each is a round of Paxos over the key's replicas, as Cassandra's
 * lightweight transactions run it (design and proofs: {@code docs/design.md}, "Conditional
 * writes"):
 * <ol>
 * <li>prepare: a majority promises a new ballot and sends its consensus state with the key's
 *     record, so the condition costs no separate read;
 * <li>a proposal accepted after the last commit may have been chosen: it is completed first (under
 *     this ballot) and the round starts over; replicas behind on the last commit are brought up to it;
 * <li>the condition is checked against the newest record the majority holds; a read, or a refused
 *     condition, ends here;
 * <li>accept: a majority accepts the new version under the ballot (it is then chosen);
 * <li>commit: the replicas store it. The answer waits for a majority, so a plain read after it sees it.
 * </ol>
 * A round preempted by a higher ballot is retried after a random pause, until the request's
 * deadline. Once a request's own proposal may have been accepted, it never answers that nothing
 * changed unless it knows: it finds its proposal committed or in progress (then it was applied),
 * or makes sure it never will be (an empty proposal accepted under a higher ballot).
 */
public final class ConditionalCoordinator {

    /** The longest random pause between rounds a conflict preempted: Cassandra's is up to 100 ms. */
    private static final long MAX_PAUSE_MICROS = 20_000;

    private final PaxosReplicas replicas;
    private final KeyTurns turns = new KeyTurns();
    private final HybridClock clock;
    /** The random part of this node's ballots, drawn once per run ({@link Ballot}). */
    private final long proposer = new SecureRandom().nextLong();
    private final Duration phaseTimeout;
    private final Duration deadline;
    private final Counter preempted;
    private final Counter completed;
    private final Counter unknown;

    /**
     * @param phaseTimeout how long one phase waits for a majority (the replication timeout)
     * @param deadline     how long a request may take in all, retries included, before it answers 504
     */
    ConditionalCoordinator(PaxosReplicas replicas, HybridClock clock, Duration phaseTimeout, Duration deadline, MeterRegistry meters) {
        this.replicas = replicas;
        this.clock = clock;
        this.phaseTimeout = phaseTimeout;
        this.deadline = deadline;
        this.preempted = Counter.builder("ringkv.conditional.rounds.preempted")
                .description("Paxos rounds retried because another coordinator's ballot was higher: contention on a key")
                .register(meters);
        this.completed = Counter.builder("ringkv.conditional.rounds.completed")
                .description("Proposals another round left in progress, completed before a request's own")
                .register(meters);
        this.unknown = Counter.builder("ringkv.conditional.outcomes.unknown")
                .description("Conditional writes answered 504 without knowing whether they were applied")
                .register(meters);
    }

    /**
     * Writes {@code update(timestamp)} if the precondition holds for the key's current version.
     *
     * @param update the new version at a timestamp: a value, or a tombstone for a delete
     */
    public Mono<Outcome> write(byte[] key, Precondition precondition, LongFunction<Record> update, ReplicationFactor factor,
            Placement placement) {
        return Mono.defer(() -> {
            // The deadline counts the wait for its turn: a queue on a hot key ends in 504, not in an endless wait.
            Request request = new Request(key, precondition, update, participants(key, factor, placement),
                    System.nanoTime() + deadline.toNanos());
            return turns.inTurn(key, () -> round(request));
        });
    }

    /** A linearizable read: it sees every conditional write answered before it started. */
    public Mono<Outcome> read(byte[] key, ReplicationFactor factor, Placement placement) {
        return write(key, Precondition.NONE, null, factor, placement);
    }

    /**
     * Who takes part: every replica the key's writes go to, those it is moving to included; a
     * round needs {@code ack} of its current owners and every one it moves to, as Cassandra counts
     * pending replicas, so that a quorum now and a quorum once the move is done share a replica.
     */
    private Participants participants(byte[] key, ReplicationFactor factor, Placement placement) {
        List<Replica> all = placement.writeReplicas(key, factor.from());
        int owners = placement.served(factor).from();
        return new Participants(all, factor.ack() + all.size() - owners);
    }

    private record Participants(List<Replica> all, int required) {
    }

    /** One request across its rounds. Rounds run one after another, so its fields need no locking. */
    private static final class Request {
        final byte[] key;
        final Precondition precondition;
        final LongFunction<Record> update;
        final Participants participants;
        final long deadlineNanos;
        /** The proposals of its update so far, by origin: any one of them may yet be chosen, never two. */
        final Map<Ballot, Record> proposed = new LinkedHashMap<>();
        int rounds;

        Request(byte[] key, Precondition precondition, LongFunction<Record> update, Participants participants, long deadlineNanos) {
            this.key = key;
            this.precondition = precondition;
            this.update = update;
            this.participants = participants;
            this.deadlineNanos = deadlineNanos;
        }

        boolean isRead() {
            return update == null;
        }

        /** The ballot of its first proposal: a commit of any of them is at or after it. */
        Ballot firstProposed() {
            return proposed.keySet().iterator().next();
        }

        /** The commits it asks the replicas for: those since its first proposal, which it looks for; none before. */
        Ballot lookingSince() {
            return proposed.isEmpty() ? null : firstProposed();
        }
    }

    private Ballot newBallot() {
        return new Ballot(clock.now(), proposer);
    }

    private Mono<Outcome> round(Request request) {
        if (System.nanoTime() > request.deadlineNanos) {
            if (!request.proposed.isEmpty()) {
                return unknownOutcome("it was proposed, and no round completed within " + deadline);
            }
            return Mono.error(new NotEnoughReplicasException("no round of consensus completed within " + deadline));
        }
        if (request.proposed.isEmpty()) {
            // A condition this node's own copy proves false needs no round, and raises no
            // promise that would preempt the round about to make it false (a hot key's losers).
            Optional<Record> held = replicas.heldHereIfCached(request.participants.all(), request.key);
            if (held.isPresent() && request.precondition.provedFalseBy(held.get())) {
                return Mono.just(new Outcome.Refused(visibleAt(held, clock.physicalNow())));
            }
        }
        request.rounds++;
        Ballot ballot = newBallot();
        return prepare(request, ballot)
                .flatMap(granted -> decide(request, ballot, granted))
                .onErrorResume(Phase.NotGranted.class, error -> retry(request, error));
    }

    /** A 504 that does not say whether the write was applied, counted. */
    private Mono<Outcome> unknownOutcome(String why) {
        unknown.increment();
        return Mono.error(new NotEnoughReplicasException("the outcome of the conditional write is unknown: " + why));
    }

    /** After a random pause, another round, under a ballot above any that preempted this one. */
    private Mono<Outcome> retry(Request request, Phase.NotGranted error) {
        if (error instanceof Phase.Preempted preemption) {
            preempted.increment();
            clock.observe(preemption.promised().time());
        }
        // Long enough, most often, for the round that preempted this one to accept and commit:
        // back at once, it would preempt that round in turn (dueling proposers).
        long pauseMicros = ThreadLocalRandom.current().nextLong(Math.min(MAX_PAUSE_MICROS, 2_000L << Math.min(request.rounds, 10)));
        return Deadlines.delay(Duration.ofNanos(pauseMicros * 1000)).then(Mono.defer(() -> round(request)));
    }

    /** The replicas that promised, and what they told. */
    private record Granted(List<Replica> replicas, Promises promises) {
    }

    private Mono<Granted> prepare(Request request, Ballot ballot) {
        return Phase.run("prepare", request.participants.all(), request.participants.required(), phaseTimeout,
                        replica -> replicas.prepare(replica, request.key, ballot, request.lookingSince()),
                        promise -> promise.granted() ? Optional.empty() : Optional.of(promise.state().promised()))
                .map(granted -> {
                    // Timestamps seen are observed, so the update's is later than the version it replaces.
                    granted.forEach(answer -> answer.answer().currentIfAny().ifPresent(record -> clock.observe(record.timestamp())));
                    return new Granted(granted.stream().map(Phase.Granted::replica).toList(),
                            new Promises(granted.stream().map(Phase.Granted::answer).toList()));
                });
    }

    private Mono<Outcome> decide(Request request, Ballot ballot, Granted granted) {
        Promises promises = granted.promises();
        Optional<Proposal> inProgress = promises.inProgress();
        if (inProgress.isPresent()) {
            Proposal again = inProgress.get().reproposedUnder(ballot);
            completed.increment();
            return accept(request, again).then(commit(request, again))
                    .then(Mono.defer(() -> request.proposed.containsKey(again.origin())
                            ? Mono.just(new Outcome.Applied(again.update()))
                            : round(request)));
        }
        if (!request.proposed.isEmpty()) {
            Optional<Ballot> mine = promises.committedOf(request.proposed.keySet());
            if (mine.isPresent()) {
                return Mono.just(new Outcome.Applied(request.proposed.get(mine.get())));
            }
            if (!promises.rememberAllAfter(request.firstProposed())) {
                return unknownOutcome("its proposal may have been accepted, and its commit is no longer remembered");
            }
        }
        Optional<Record> current = promises.current();
        return catchUp(request, granted, current).then(Mono.defer(() -> conclude(request, ballot, current)));
    }

    /**
     * Brings the replicas that promised but miss the latest commit up to it, with the newest record
     * (at least as new as the commit's). Then the commit is held by a quorum before this round
     * builds on it: a coordinator looking for its own commit ({@link Promises#committedOf}) finds it.
     */
    private Mono<Void> catchUp(Request request, Granted granted, Optional<Record> current) {
        List<Replica> behind = granted.promises().behind().stream().map(granted.replicas()::get).toList();
        if (behind.isEmpty()) {
            return Mono.empty();
        }
        Commit latest = granted.promises().latestCommit();
        return Phase.run("catch-up", behind, behind.size(), phaseTimeout,
                replica -> replicas.commit(replica, request.key, latest, current.orElse(null)),
                done -> Optional.<Ballot>empty()).then();
    }

    /**
     * Reads and checks the condition as of the ballot's time: a value expired by then is absent.
     * Later rounds have later ballots, so once one sees a value expired, every later one does.
     */
    private Mono<Outcome> conclude(Request request, Ballot ballot, Optional<Record> current) {
        Optional<Record> visible = visibleAt(current, HybridClock.physicalMillisOf(ballot.time()));
        if (request.isRead()) {
            return Mono.just(new Outcome.Read(visible));
        }
        if (!request.precondition.holds(visible)) {
            Outcome refused = new Outcome.Refused(visible);
            // A proposal of its own that a minority accepted must never be chosen after this
            // answer: an empty proposal accepted by a majority under a higher ballot closes it.
            return request.proposed.isEmpty() ? Mono.just(refused) : accept(request, Proposal.empty(ballot)).thenReturn(refused);
        }
        long after = current.map(Record::timestamp).orElse(0L);
        Proposal mine = Proposal.of(ballot, request.update.apply(Math.max(clock.now(), after + 1)));
        request.proposed.put(ballot, mine.update());
        return accept(request, mine).then(commit(request, mine)).thenReturn(new Outcome.Applied(mine.update()));
    }

    /** What a client sees of the record at {@code millis}: nothing for a tombstone or a value expired by then. */
    private static Optional<Record> visibleAt(Optional<Record> record, long millis) {
        return record.filter(version -> version.liveAt(millis));
    }

    private Mono<Void> accept(Request request, Proposal proposal) {
        return Phase.run("accept", request.participants.all(), request.participants.required(), phaseTimeout,
                        replica -> replicas.accept(replica, request.key, proposal),
                        promised -> promised.equals(proposal.ballot()) ? Optional.empty() : Optional.of(promised))
                .then();
    }

    /**
     * Commits a chosen proposal. Its answer waits for a majority, so that a plain read after it
     * sees it; a commit that reaches fewer does not undo the choice (the next round completes it).
     */
    private Mono<Void> commit(Request request, Proposal proposal) {
        Commit commit = proposal.commit();
        return Phase.run("commit", request.participants.all(), request.participants.required(), phaseTimeout,
                        replica -> replicas.commit(replica, request.key, commit, proposal.update()),
                        done -> Optional.<Ballot>empty())
                .then()
                .onErrorResume(Phase.NotGranted.class, error -> Mono.empty());
    }
}
