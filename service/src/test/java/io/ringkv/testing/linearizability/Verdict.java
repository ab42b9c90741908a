package io.ringkv.testing.linearizability;

import java.util.List;

/**
 * What {@link LinearizabilityChecker} found: a verdict for each key, and the totals of the history.
 * Its {@link #toString()} is meant for an assertion's description: the totals, and the explanation
 * of every key that is not {@link KeyVerdict.Outcome#OK}.
 */
public record Verdict(List<KeyVerdict> keys, Totals totals) {

    public Verdict {
        keys = List.copyOf(keys);
    }

    /** True only if every key's history is linearizable; a search too large for its budget is not. */
    public boolean ok() {
        return keys.stream().allMatch(KeyVerdict::ok);
    }

    /** The keys whose verdict is not {@link KeyVerdict.Outcome#OK}. */
    public List<KeyVerdict> failures() {
        return keys.stream().filter(key -> !key.ok()).toList();
    }

    public long count(KeyVerdict.Outcome outcome) {
        return keys.stream().filter(key -> key.outcome() == outcome).count();
    }

    @Override
    public String toString() {
        StringBuilder text = new StringBuilder("%s on %d keys: %d OK, %d violations, %d too large to check"
                .formatted(totals, keys.size(), count(KeyVerdict.Outcome.OK), count(KeyVerdict.Outcome.VIOLATION),
                        count(KeyVerdict.Outcome.TOO_LARGE)));
        for (KeyVerdict failure : failures()) {
            text.append("\n").append(failure.explanation());
        }
        return text.toString();
    }
}
