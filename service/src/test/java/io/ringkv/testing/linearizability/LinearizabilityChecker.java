package io.ringkv.testing.linearizability;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Checks that a history of concurrent operations on a key-value store is linearizable: that each
 * operation can be given one instant within its interval (between its call and its return) so that
 * the operations, taken one at a time in the order of those instants, give exactly the results the
 * clients saw (Herlihy and Wing, 1990).
 *
 * <h2>The model</h2>
 * Each key is a register, absent at first, then holding a string. A read answers the value (or
 * absence). A write sets a value, or deletes, under a condition ({@link Expect}): unconditionally,
 * only if absent, only if present, or only if the value is exactly a given one. It ends
 * {@link Result#OK} (the condition held and it took effect), {@link Result#FAILED} (the condition
 * did not hold, nothing changed) or {@link Result#UNKNOWN} (it may have taken effect at any moment
 * after its call, or never: its return is taken as never). An indeterminate read tells nothing and
 * is left out. Linearizability is compositional (Herlihy and Wing's locality), so each key is
 * checked alone, and the keys in parallel.
 *
 * <h2>The search</h2>
 * Wing and Gong's depth-first search for an order ("Testing and verifying concurrent objects",
 * J. Parallel and Distributed Computing, 1993), with Lowe's memoisation of the (operations placed,
 * state) pairs already explored ("Testing for linearizability", Concurrency and Computation:
 * Practice and Experience, 2017), as Porcupine implements it (github.com/anishathalye/porcupine,
 * {@code checker.go}); see {@link Search}. Operations whose intervals only touch count as
 * concurrent, so a tie of the clock never makes a valid history invalid.
 *
 * <p>The search is exponential at worst, so each key has a budget of steps (one step: trying one
 * operation in one state). A key whose search exhausts it is {@link KeyVerdict.Outcome#TOO_LARGE},
 * which is not OK. Steps rather than time, so that a verdict is the same on any machine.
 */
public final class LinearizabilityChecker {

    /**
     * Steps per key by default. Sixteen clients overlapping nearly always, 2,400 operations on a key
     * with 2% of the writes indeterminate, take up to some 300,000 steps (see the unit tests);
     * spending all 5,000,000 takes a few seconds and a few hundred megabytes of memo at most.
     */
    public static final long DEFAULT_STEPS_PER_KEY = 5_000_000;

    private LinearizabilityChecker() {
    }

    public static Verdict check(List<Operation> history) {
        return check(history, DEFAULT_STEPS_PER_KEY);
    }

    public static Verdict check(List<Operation> history, long stepsPerKey) {
        Map<String, List<Operation>> byKey = new TreeMap<>();
        for (Operation operation : history) {
            if (!(operation instanceof Operation.Read && operation.result() == Result.UNKNOWN)) {
                byKey.computeIfAbsent(operation.key(), key -> new ArrayList<>()).add(operation);
            }
        }
        List<KeyVerdict> keys = byKey.entrySet().parallelStream()
                .map(key -> new Search(key.getKey(), key.getValue(), stepsPerKey).run())
                .toList();
        return new Verdict(keys, Totals.of(history));
    }
}
