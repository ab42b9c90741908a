package io.ringkv.conditional;

import java.util.Optional;

import io.ringkv.record.Record;

/** How a request under consensus ended, when it ended one way for sure (an unknown end is a 504). */
public sealed interface Outcome {

    /** The condition held and the update was chosen: {@code record} is the key's version now. */
    record Applied(Record record) implements Outcome {
    }

    /** The condition did not hold against {@code current}, the live value (empty: absent, deleted or expired); nothing changed. */
    record Refused(Optional<Record> current) implements Outcome {
    }

    /** A linearizable read found {@code current}, the live value (empty: absent, deleted or expired). */
    record Read(Optional<Record> current) implements Outcome {
    }
}
