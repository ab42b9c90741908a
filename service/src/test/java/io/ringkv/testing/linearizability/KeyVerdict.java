package io.ringkv.testing.linearizability;

/**
 * The check of one key's history: its outcome, how many operations it had and how many steps the
 * search took, and, unless the outcome is {@link Outcome#OK}, an explanation for the test's log.
 */
public record KeyVerdict(String key, Outcome outcome, int operations, long steps, String explanation) {

    public enum Outcome {
        /** Some order of the operations, within their intervals, fits the register. */
        OK,
        /** No order does. */
        VIOLATION,
        /** The search ran out of its budget of steps before finding an order or ruling all out. */
        TOO_LARGE
    }

    public boolean ok() {
        return outcome == Outcome.OK;
    }
}
