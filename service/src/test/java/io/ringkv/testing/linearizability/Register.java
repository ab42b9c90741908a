package io.ringkv.testing.linearizability;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The sequential specification of one key: a register, absent or a string, under the operations of
 * that key's history. Values are numbered so that a state is an int, cheap to store in the search's
 * cache and to compare; 0 is absent.
 */
final class Register {

    static final int ABSENT = 0;
    /**
     * What {@link #step} answers when the operation cannot take effect in that state with the result
     * it had, or, being an indeterminate write, would change nothing.
     */
    static final int REJECTED = -1;

    private final List<Operation> operations;
    /** For each operation, the number of the value it observed (a read) or would leave (a write). */
    private final int[] valueOf;
    private final List<Optional<String>> values = new ArrayList<>(List.of(Optional.empty()));

    Register(List<Operation> operations) {
        this.operations = operations;
        this.valueOf = new int[operations.size()];
        Map<Optional<String>, Integer> numbers = new HashMap<>(Map.of(Optional.empty(), ABSENT));
        for (int i = 0; i < operations.size(); i++) {
            Optional<String> value = switch (operations.get(i)) {
                case Operation.Read read -> read.observed();
                case Operation.Write write -> write.newValue();
            };
            valueOf[i] = numbers.computeIfAbsent(value, v -> {
                values.add(v);
                return values.size() - 1;
            });
        }
    }

    /** The state after operation {@code op} takes effect in {@code state}, or {@link #REJECTED}. */
    int step(int state, int op) {
        return switch (operations.get(op)) {
            case Operation.Read read -> valueOf[op] == state ? state : REJECTED;
            case Operation.Write write -> {
                boolean holds = write.expect().holds(value(state));
                yield switch (write.result()) {
                    case OK -> holds ? valueOf[op] : REJECTED;
                    case FAILED -> holds ? REJECTED : state;
                    // An indeterminate write that would change nothing here is as good as one
                    // never placed, which the search tries anyway: refusing it spares the search
                    // exploring the same states twice.
                    case UNKNOWN -> holds && valueOf[op] != state ? valueOf[op] : REJECTED;
                };
            }
        };
    }

    Optional<String> value(int state) {
        return values.get(state);
    }
}
