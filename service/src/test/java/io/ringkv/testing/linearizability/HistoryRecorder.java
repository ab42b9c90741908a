package io.ringkv.testing.linearizability;

import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * Where concurrent client threads put what they did, for {@link LinearizabilityChecker}. A client
 * takes {@link #now()} just before it sends a request and again as soon as the answer (or the
 * failure) is in, and records the operation with both: the interval must cover the request's whole
 * life on the server, or the check can call a correct store wrong.
 */
public final class HistoryRecorder {

    private final Queue<Operation> operations = new ConcurrentLinkedQueue<>();

    /** The clock the times of operations are on; one for every thread, as the check compares them. */
    public long now() {
        return System.nanoTime();
    }

    public void record(Operation operation) {
        operations.add(operation);
    }

    /** The operations recorded so far, in no particular order. */
    public List<Operation> history() {
        return List.copyOf(operations);
    }

    public Totals totals() {
        return Totals.of(history());
    }

    public int count(Result result) {
        return totals().count(result);
    }
}
