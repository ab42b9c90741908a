package io.ringkv.testing.linearizability;

import java.util.List;
import java.util.Optional;

/**
 * Where the search got stuck: after placing {@code placed} in that order, leaving the key
 * {@code state}, it reached the return of {@code unplaced}, and none of the operations {@code pending}
 * at that moment (called, not yet placed) could take effect next. The stop furthest into the
 * history is the one worth reading: everything before it fitted.
 */
record Impasse(List<Operation> placed, Optional<String> state, Operation unplaced, List<Operation> pending) {

    /** How many of the placed operations to show: the last ones, the context of the failure. */
    private static final int SHOWN = 10;

    String describe(long originNanos) {
        StringBuilder text = new StringBuilder();
        if (placed.isEmpty()) {
            text.append("  Not one operation fits first, on the key absent as it starts.\n");
        } else {
            int shown = Math.min(SHOWN, placed.size());
            text.append("  The longest linearization found places %d operations%s:\n"
                    .formatted(placed.size(), shown < placed.size() ? ", ending with" : ""));
            for (Operation operation : placed.subList(placed.size() - shown, placed.size())) {
                text.append("    ").append(operation.describe(originNanos)).append('\n');
            }
            text.append("  which leaves the key ").append(state.map(v -> "\"" + v + "\"").orElse("absent")).append(".\n");
        }
        text.append("  Then none of these, called and not yet placed, could take effect next:\n");
        for (Operation operation : pending) {
            text.append("    ").append(operation.describe(originNanos));
            if (operation == unplaced) {
                text.append("   <- returned, so it must have taken effect by then");
            }
            text.append('\n');
        }
        return text.toString();
    }
}
