package io.ringkv.testing.linearizability;

import static io.ringkv.testing.linearizability.Expect.ABSENT;
import static io.ringkv.testing.linearizability.Expect.ANY;
import static io.ringkv.testing.linearizability.Expect.PRESENT;
import static io.ringkv.testing.linearizability.Result.FAILED;
import static io.ringkv.testing.linearizability.Result.OK;
import static io.ringkv.testing.linearizability.Result.UNKNOWN;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;

/** Histories whose verdict is known, each checked both ways: the valid must pass, the invalid must be found. */
class LinearizabilityCheckerTest {

    private static final String KEY = "k";

    @Test
    void acceptsASequentialHistory() {
        assertLinearizable(
                write(1, 0, 1, ANY, "a", OK),
                read(2, 2, 3, "a"),
                write(1, 4, 5, Expect.value("a"), "b", OK),
                write(2, 6, 7, ABSENT, "c", FAILED),
                read(3, 8, 9, "b"),
                write(3, 10, 11, PRESENT, null, OK),
                read(1, 12, 13, null),
                write(2, 14, 15, PRESENT, "d", FAILED),
                write(2, 16, 17, ABSENT, "e", OK),
                write(1, 18, 19, Expect.value("b"), "f", FAILED),
                read(3, 20, 21, "e"));
    }

    @Test
    void acceptsOverlappingWritesSeenInEitherOrder() {
        Operation a = write(1, 0, 10, ANY, "a", OK);
        Operation b = write(2, 2, 12, ANY, "b", OK);
        // During both writes a reader sees one, then the other; afterwards the last of them stays.
        assertLinearizable(a, b, read(3, 3, 4, "a"), read(3, 5, 6, "b"), read(4, 13, 14, "b"), read(3, 15, 16, "b"));
        assertLinearizable(a, b, read(3, 3, 4, "b"), read(3, 5, 6, "a"), read(4, 13, 14, "a"), read(3, 15, 16, "a"));
    }

    @Test
    void acceptsAReadDuringAWriteSeeingTheOldValueThenALaterReadSeeingTheNew() {
        assertLinearizable(write(1, 0, 1, ANY, "a", OK), write(1, 2, 20, ANY, "b", OK), read(2, 3, 4, "a"), read(2, 5, 6, "b"));
    }

    @Test
    void findsAReadSeeingTheOldValueAfterAnotherHadSeenTheNew() {
        assertViolation(write(1, 0, 1, ANY, "a", OK), write(1, 2, 20, ANY, "b", OK), read(2, 3, 4, "b"), read(3, 5, 6, "a"));
    }

    @Test
    void countsIntervalsThatOnlyTouchAsConcurrent() {
        // The read's call and the write's return have the same time: either may have come first.
        assertLinearizable(write(1, 0, 1, ANY, "a", OK), write(1, 2, 5, ANY, "b", OK), read(2, 5, 6, "a"));
    }

    @Test
    void findsAStaleRead() {
        Verdict verdict = assertViolation(write(1, 0, 1, ANY, "a", OK), write(2, 2, 3, ANY, "b", OK), read(3, 4, 5, "a"));
        assertThat(verdict.toString())
                .contains("key \"k\" is not linearizable")
                .contains("which leaves the key \"b\"")
                .contains("client 3 read -> \"a\" [+0.000ms .. +0.000ms]   <- returned");
    }

    @Test
    void findsAReadOfAValueNeverWritten() {
        assertViolation(write(1, 0, 1, ANY, "a", OK), read(2, 0, 5, "z"));
        assertViolation(read(2, 0, 5, "z"));
    }

    @Test
    void findsTwoCreatesIfAbsentThatBothSucceeded() {
        assertViolation(write(1, 0, 1, ABSENT, "a", OK), write(2, 2, 3, ABSENT, "b", OK));
        assertViolation(write(1, 0, 10, ABSENT, "a", OK), write(2, 5, 15, ABSENT, "b", OK));
    }

    @Test
    void acceptsTwoCreatesIfAbsentWithADeleteBetween() {
        assertLinearizable(write(1, 0, 1, ABSENT, "a", OK), write(3, 2, 3, ANY, null, OK), write(2, 4, 5, ABSENT, "b", OK));
        assertLinearizable(write(1, 0, 10, ABSENT, "a", OK), write(3, 0, 10, PRESENT, null, OK), write(2, 5, 15, ABSENT, "b", OK));
    }

    @Test
    void findsACompareAndSetThatSucceededOnAnotherValue() {
        assertViolation(write(1, 0, 1, ANY, "a", OK), write(2, 2, 3, Expect.value("x"), "b", OK));
    }

    @Test
    void findsAConditionalWriteThatFailedThoughItsConditionHeld() {
        assertViolation(write(1, 0, 1, ABSENT, "a", FAILED));
        assertViolation(write(1, 0, 1, ANY, "a", OK), write(2, 2, 3, Expect.value("a"), "b", FAILED));
        assertViolation(write(1, 0, 1, ANY, "a", OK), write(2, 2, 3, PRESENT, "b", FAILED));
    }

    @Test
    void findsALostUpdate() {
        // Two clients read 0 and both increment it by compare-and-set: one of the two must fail.
        Operation[] start = {write(1, 0, 1, ANY, "0", OK), read(2, 2, 3, "0"), read(3, 2, 3, "0")};
        assertViolation(concat(start, write(2, 4, 5, Expect.value("0"), "1", OK), write(3, 6, 7, Expect.value("0"), "1", OK)));
        assertViolation(concat(start, write(2, 4, 8, Expect.value("0"), "1", OK), write(3, 5, 7, Expect.value("0"), "1", OK)));
        assertLinearizable(concat(start, write(2, 4, 8, Expect.value("0"), "1", OK), write(3, 5, 7, Expect.value("0"), "1", FAILED)));
    }

    @Test
    void acceptsAHistoryExplainedOnlyByAnIndeterminateWriteTakingEffect() {
        // The second write timed out, yet its value is read well after: it took effect.
        assertLinearizable(write(1, 0, 1, ANY, "a", OK), write(2, 2, 3, Expect.value("a"), "b", UNKNOWN), read(3, 10, 11, "b"));
    }

    @Test
    void acceptsAHistoryExplainedOnlyByAnIndeterminateWriteNotTakingEffect() {
        // Had the timed-out create taken effect before the second, the second would have failed.
        assertLinearizable(write(1, 0, 1, ABSENT, "a", UNKNOWN), write(2, 2, 3, ABSENT, "b", OK), read(3, 4, 5, "b"), read(1, 6, 7, "b"));
    }

    @Test
    void findsAnIndeterminateWriteReadBeforeItsCall() {
        assertViolation(write(1, 0, 1, ANY, "a", OK), read(3, 2, 3, "b"), write(2, 4, 5, ANY, "b", UNKNOWN));
    }

    @Test
    void leavesOutAnIndeterminateRead() {
        Verdict verdict = assertLinearizable(write(1, 0, 1, ANY, "a", OK), Operation.unknownRead(2, KEY, 2, 3), read(3, 4, 5, "a"));
        assertThat(verdict.totals()).isEqualTo(new Totals(2, 1, 2, 0, 1));
    }

    @Test
    void checksEachKeyOnItsOwn() {
        // On one register the read of x would be stale; on two keys each read sees its key's write.
        assertLinearizable(
                write(1, "x", 0, 1, ANY, "a", OK),
                write(2, "y", 2, 3, ANY, "b", OK),
                read(3, "x", 4, 5, "a"),
                read(3, "y", 6, 7, "b"));

        Verdict verdict = LinearizabilityChecker.check(List.of(
                write(1, "x", 0, 1, ANY, "a", OK),
                write(2, "y", 2, 3, ANY, "b", OK),
                write(2, "y", 4, 5, ANY, "c", OK),
                read(3, "x", 6, 7, "a"),
                read(3, "y", 8, 9, "b")));
        assertThat(verdict.ok()).isFalse();
        assertThat(verdict.failures()).extracting(KeyVerdict::key).containsExactly("y");
        assertThat(verdict.keys()).extracting(KeyVerdict::outcome).containsExactly(KeyVerdict.Outcome.OK, KeyVerdict.Outcome.VIOLATION);
    }

    @Test
    void givesUpRatherThanHangWhenTheSearchOutgrowsItsBudget() {
        // Twenty concurrent writes and then a value none of them wrote: ruling out every order
        // means visiting every subset of the writes.
        List<Operation> history = new ArrayList<>();
        for (int client = 0; client < 20; client++) {
            history.add(write(client, 0, 100, ANY, "v" + client, OK));
        }
        history.add(read(99, 200, 201, "never"));
        Verdict verdict = LinearizabilityChecker.check(history, 10_000);
        assertThat(verdict.ok()).isFalse();
        assertThat(verdict.keys()).singleElement().satisfies(key -> {
            assertThat(key.outcome()).isEqualTo(KeyVerdict.Outcome.TOO_LARGE);
            assertThat(key.steps()).isEqualTo(10_000);
        });
        assertThat(verdict.toString()).contains("1 too large to check").contains("gave up after 10000 steps");
    }

    @Test
    void acceptsRandomHistoriesOfAnAtomicStoreAndFindsEachOneMadeStale() {
        int corrupted = 0;
        for (long seed = 1; seed <= 300; seed++) {
            Random random = new Random(seed);
            List<String> keys = random.nextBoolean() ? List.of("a") : List.of("a", "b");
            List<Operation> history = new RandomHistories(seed, keys, 5)
                    .generate(1 + random.nextInt(6), 10 + random.nextInt(40), 20, 10 + random.nextInt(100));

            Verdict verdict = LinearizabilityChecker.check(history);
            assertThat(verdict.ok()).as("seed %d: %s", seed, verdict).isTrue();

            Optional<List<Operation>> stale = RandomHistories.withStaleRead(history, random);
            if (stale.isPresent()) {
                corrupted++;
                Verdict found = LinearizabilityChecker.check(stale.get());
                assertThat(found.count(KeyVerdict.Outcome.VIOLATION)).as("seed %d: %s", seed, found).isEqualTo(1);
            }
        }
        assertThat(corrupted).as("histories with a read that could be made stale").isGreaterThan(150);
    }

    @Test
    void agreesWithAnExhaustiveSearchOnSmallArbitraryHistories() {
        // Histories with random results, mostly not linearizable, on few values so that they
        // repeat: every shortcut the search takes must leave its verdict that of trying every order.
        Random random = new Random(7);
        int linearizable = 0;
        int histories = 20_000;
        for (int i = 0; i < histories; i++) {
            List<Operation> history = arbitraryHistory(random);
            boolean expected = fitsInSomeOrder(new ArrayList<>(history), Optional.empty());
            Verdict verdict = LinearizabilityChecker.check(history);
            assertThat(verdict.ok()).as("history %d: %s\n%s", i, history, verdict).isEqualTo(expected);
            linearizable += expected ? 1 : 0;
        }
        assertThat(linearizable).as("linearizable histories").isBetween(histories / 10, histories * 9 / 10);
    }

    @Test
    void checksSixteenClientsOverlappingHeavilyOnTwoKeys() {
        // Each operation lasts up to 40 times the pause between a client's operations: nearly all
        // sixteen clients' operations overlap; and as under faults, some writes end indeterminate.
        List<Operation> history = new RandomHistories(42, List.of("a", "b"), 2).generate(16, 300, 5, 200);
        Verdict verdict = LinearizabilityChecker.check(history);
        assertThat(verdict.ok()).as("%s", verdict).isTrue();
        assertThat(verdict.totals().operations()).isEqualTo(16 * 300);
    }

    @Test
    void recordsFromConcurrentThreads() throws InterruptedException {
        // Clients sharing one atomic reference as the store, in the way a process test uses the recorder.
        HistoryRecorder recorder = new HistoryRecorder();
        AtomicReference<Optional<String>> store = new AtomicReference<>(Optional.empty());
        int clients = 8;
        CountDownLatch done = new CountDownLatch(clients);
        try (ExecutorService threads = Executors.newFixedThreadPool(clients)) {
            for (int client = 0; client < clients; client++) {
                int id = client;
                threads.execute(() -> {
                    for (int i = 0; i < 200; i++) {
                        long call = recorder.now();
                        if (i % 2 == 0) {
                            Optional<String> observed = store.get();
                            recorder.record(Operation.read(id, KEY, call, recorder.now(), observed));
                        } else {
                            Optional<String> value = Optional.of(id + "-" + i);
                            Optional<String> current = store.get();
                            boolean set = store.compareAndSet(current, value);
                            recorder.record(Operation.write(id, KEY, call, recorder.now(),
                                    current.map(Expect::value).orElse(ABSENT), value, set ? OK : FAILED));
                        }
                    }
                    done.countDown();
                });
            }
            done.await();
        }
        assertThat(recorder.totals().operations()).isEqualTo(clients * 200);
        assertThat(recorder.count(OK) + recorder.count(FAILED)).isEqualTo(clients * 200);
        Verdict verdict = LinearizabilityChecker.check(recorder.history());
        assertThat(verdict.ok()).as("%s", verdict).isTrue();
    }

    private static List<Operation> arbitraryHistory(Random random) {
        List<Optional<String>> values = List.of(Optional.empty(), Optional.of("a"), Optional.of("b"), Optional.of("c"));
        List<Operation> history = new ArrayList<>();
        for (int op = random.nextInt(1, 8); op > 0; op--) {
            long call = random.nextInt(20);
            long returned = call + random.nextInt(8);
            Optional<String> value = values.get(random.nextInt(values.size()));
            if (random.nextInt(3) == 0) {
                history.add(Operation.read(op, KEY, call, returned, value));
                continue;
            }
            Expect expect = switch (random.nextInt(4)) {
                case 0 -> ANY;
                case 1 -> ABSENT;
                case 2 -> PRESENT;
                default -> Expect.value(values.get(random.nextInt(1, values.size())).orElseThrow());
            };
            Result result = Result.values()[random.nextInt(Result.values().length)];
            history.add(Operation.write(op, KEY, call, returned, expect, value, result));
        }
        return history;
    }

    /**
     * The definition, tried exhaustively: some operation not preceded in real time by another
     * remaining one can take effect in {@code state}, and the rest fit after it; an indeterminate
     * write need never take effect, and imposes no order as it never returned.
     */
    private static boolean fitsInSomeOrder(List<Operation> remaining, Optional<String> state) {
        if (remaining.stream().allMatch(operation -> operation.result() == UNKNOWN)) {
            return true;
        }
        for (Operation next : remaining) {
            boolean preceded = remaining.stream()
                    .anyMatch(other -> other.result() != UNKNOWN && other.returnNanos() < next.callNanos());
            if (preceded) {
                continue;
            }
            List<Operation> rest = new ArrayList<>(remaining);
            rest.remove(next);
            Optional<Optional<String>> after = switch (next) {
                case Operation.Read read -> read.observed().equals(state) ? Optional.of(state) : Optional.empty();
                case Operation.Write write -> {
                    boolean holds = write.expect().holds(state);
                    yield switch (write.result()) {
                        case OK -> holds ? Optional.of(write.newValue()) : Optional.empty();
                        case FAILED -> holds ? Optional.empty() : Optional.of(state);
                        case UNKNOWN -> Optional.of(holds ? write.newValue() : state);
                    };
                }
            };
            if (after.isPresent() && fitsInSomeOrder(rest, after.get())) {
                return true;
            }
        }
        return false;
    }

    private static Verdict assertLinearizable(Operation... history) {
        Verdict verdict = LinearizabilityChecker.check(List.of(history));
        assertThat(verdict.ok()).as("%s", verdict).isTrue();
        return verdict;
    }

    private static Verdict assertViolation(Operation... history) {
        Verdict verdict = LinearizabilityChecker.check(List.of(history));
        assertThat(verdict.ok()).as("%s", verdict).isFalse();
        assertThat(verdict.failures()).extracting(KeyVerdict::outcome).containsOnly(KeyVerdict.Outcome.VIOLATION);
        return verdict;
    }

    private static Operation[] concat(Operation[] first, Operation... then) {
        List<Operation> all = new ArrayList<>(List.of(first));
        all.addAll(List.of(then));
        return all.toArray(Operation[]::new);
    }

    private static Operation read(int client, long call, long returned, String observed) {
        return read(client, KEY, call, returned, observed);
    }

    private static Operation read(int client, String key, long call, long returned, String observed) {
        return Operation.read(client, key, call, returned, Optional.ofNullable(observed));
    }

    /** A write of {@code value}, or a delete if it is null. */
    private static Operation write(int client, long call, long returned, Expect expect, String value, Result result) {
        return write(client, KEY, call, returned, expect, value, result);
    }

    private static Operation write(int client, String key, long call, long returned, Expect expect, String value, Result result) {
        return Operation.write(client, key, call, returned, expect, Optional.ofNullable(value), result);
    }
}
