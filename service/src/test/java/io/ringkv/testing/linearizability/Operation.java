package io.ringkv.testing.linearizability;

import java.util.Locale;
import java.util.Objects;
import java.util.Optional;

/**
 * One client's operation on one key, as recorded by a test: when it was called and when it
 * returned (both {@link System#nanoTime()}), what it asked and what it got. The key holds a single
 * register, absent or a string; see {@link LinearizabilityChecker} for the model.
 */
public sealed interface Operation permits Operation.Read, Operation.Write {

    int client();

    String key();

    long callNanos();

    /** When the client got the answer; for an {@link Result#UNKNOWN} write the search takes it as never. */
    long returnNanos();

    Result result();

    /** A read that returned {@code observed} (empty: the key was absent). */
    static Read read(int client, String key, long callNanos, long returnNanos, Optional<String> observed) {
        return new Read(client, key, callNanos, returnNanos, observed, Result.OK);
    }

    /** A read that got no answer: it constrains nothing, so the checker only counts it. */
    static Read unknownRead(int client, String key, long callNanos, long returnNanos) {
        return new Read(client, key, callNanos, returnNanos, Optional.empty(), Result.UNKNOWN);
    }

    /** A write of {@code newValue} (empty: a delete) under {@code expect}, which ended as {@code result}. */
    static Write write(int client, String key, long callNanos, long returnNanos, Expect expect, Optional<String> newValue, Result result) {
        return new Write(client, key, callNanos, returnNanos, expect, newValue, result);
    }

    /** This operation for a log line, with its times in milliseconds after {@code originNanos}. */
    default String describe(long originNanos) {
        String returned = result() == Result.UNKNOWN ? "?" : millis(returnNanos() - originNanos);
        return "client %d %s [%s .. %s]".formatted(client(), what(), millis(callNanos() - originNanos), returned);
    }

    /** What was asked and answered, without the times. */
    String what();

    private static String millis(long nanos) {
        return String.format(Locale.ROOT, "+%.3fms", nanos / 1e6);
    }

    private static String show(Optional<String> value) {
        return value.map(v -> "\"" + v + "\"").orElse("absent");
    }

    private static void validate(String key, long callNanos, long returnNanos, Result result) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(result, "result");
        if (returnNanos < callNanos) {
            throw new IllegalArgumentException("returned (" + returnNanos + ") before its call (" + callNanos + ")");
        }
    }

    record Read(int client, String key, long callNanos, long returnNanos, Optional<String> observed, Result result) implements Operation {
        public Read {
            validate(key, callNanos, returnNanos, result);
            Objects.requireNonNull(observed, "observed");
            if (result == Result.FAILED) {
                throw new IllegalArgumentException("a read has no condition to fail");
            }
        }

        @Override
        public String what() {
            return result == Result.UNKNOWN ? "read -> ?" : "read -> " + show(observed);
        }
    }

    record Write(int client, String key, long callNanos, long returnNanos, Expect expect, Optional<String> newValue, Result result)
            implements Operation {
        public Write {
            validate(key, callNanos, returnNanos, result);
            Objects.requireNonNull(expect, "expect");
            Objects.requireNonNull(newValue, "newValue");
        }

        @Override
        public String what() {
            String change = newValue.isPresent() ? "write " + show(newValue) : "delete";
            return "%s if %s -> %s".formatted(change, expect, result);
        }
    }
}
