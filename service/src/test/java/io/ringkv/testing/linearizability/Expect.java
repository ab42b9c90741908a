package io.ringkv.testing.linearizability;

import java.util.Objects;
import java.util.Optional;

/**
 * The condition of a write, checked against the key's value at the moment the write takes effect.
 * Each maps to what the client sends: nothing, {@code If-None-Match: *}, {@code If-Match: *}, or
 * {@code If-Match} with the etag it read along with a value.
 */
public sealed interface Expect {

    /** Unconditional. */
    Expect ANY = new Any();
    /** Only if the key is absent ({@code If-None-Match: *}). */
    Expect ABSENT = new Absent();
    /** Only if the key has a value, whichever ({@code If-Match: *}). */
    Expect PRESENT = new Present();

    /** Only if the key's value is exactly {@code value} ({@code If-Match} with the etag read with it). */
    static Expect value(String value) {
        return new Value(value);
    }

    /** Whether the condition holds when the key is {@code current}. */
    boolean holds(Optional<String> current);

    record Any() implements Expect {
        @Override
        public boolean holds(Optional<String> current) {
            return true;
        }

        @Override
        public String toString() {
            return "ANY";
        }
    }

    record Absent() implements Expect {
        @Override
        public boolean holds(Optional<String> current) {
            return current.isEmpty();
        }

        @Override
        public String toString() {
            return "ABSENT";
        }
    }

    record Present() implements Expect {
        @Override
        public boolean holds(Optional<String> current) {
            return current.isPresent();
        }

        @Override
        public String toString() {
            return "PRESENT";
        }
    }

    record Value(String value) implements Expect {
        public Value {
            Objects.requireNonNull(value, "value");
        }

        @Override
        public boolean holds(Optional<String> current) {
            return current.isPresent() && current.get().equals(value);
        }

        @Override
        public String toString() {
            return "VALUE(\"" + value + "\")";
        }
    }
}
