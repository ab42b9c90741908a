package io.ringkv.testing.linearizability;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The calls and returns of one key's operations in time order, as a doubly linked list from which
 * the search lifts an operation once it has placed it, and into which it puts the operation back
 * when it backtracks (Knuth's dancing links, as Porcupine does). Entries are numbered in time
 * order, so a later entry has a larger number.
 *
 * <p>At equal times a call sorts before a return: operations whose intervals only touch are then
 * concurrent, which can only allow more orders, so a valid history is never called invalid for a
 * tie of the clock. An {@link Result#UNKNOWN} write has a call and no return: it may be placed
 * anywhere after its call, or nowhere.
 */
final class Entries {

    static final int HEAD = 0;
    static final int NONE = -1;

    private final int[] operation;
    private final boolean[] isCall;
    /** For a call, its return entry, or {@link #NONE} if the operation has none. */
    private final int[] returnOf;
    private final int[] previous;
    private final int[] next;
    private final int returns;
    private final boolean hasUnknown;

    Entries(List<Operation> operations) {
        record Event(long time, boolean isReturn, int operation) {
        }
        List<Event> events = new ArrayList<>();
        for (int op = 0; op < operations.size(); op++) {
            Operation operation = operations.get(op);
            events.add(new Event(operation.callNanos(), false, op));
            if (operation.result() != Result.UNKNOWN) {
                events.add(new Event(operation.returnNanos(), true, op));
            }
        }
        events.sort(Comparator.comparingLong(Event::time).thenComparing(Event::isReturn).thenComparingInt(Event::operation));

        int size = events.size() + 1;
        this.operation = new int[size];
        this.isCall = new boolean[size];
        this.returnOf = new int[size];
        this.previous = new int[size];
        this.next = new int[size];
        int[] callEntry = new int[operations.size()];
        int returnCount = 0;
        for (int entry = HEAD; entry < size; entry++) {
            previous[entry] = entry - 1;
            next[entry] = entry + 1 < size ? entry + 1 : NONE;
            returnOf[entry] = NONE;
            if (entry == HEAD) {
                continue;
            }
            Event event = events.get(entry - 1);
            operation[entry] = event.operation();
            isCall[entry] = !event.isReturn();
            if (event.isReturn()) {
                returnOf[callEntry[event.operation()]] = entry;
                returnCount++;
            } else {
                callEntry[event.operation()] = entry;
            }
        }
        this.returns = returnCount;
        this.hasUnknown = returnCount < operations.size();
    }

    /** How many operations have a return, that is, must be placed. */
    int returns() {
        return returns;
    }

    /** Whether some operation has no return: an indeterminate write. */
    boolean hasUnknown() {
        return hasUnknown;
    }

    int first() {
        return next[HEAD];
    }

    int next(int entry) {
        return next[entry];
    }

    boolean isCall(int entry) {
        return isCall[entry];
    }

    int operation(int entry) {
        return operation[entry];
    }

    boolean hasReturn(int call) {
        return returnOf[call] != NONE;
    }

    /** Takes a placed operation's call and return out of the list. */
    void lift(int call) {
        unlink(call);
        if (hasReturn(call)) {
            unlink(returnOf[call]);
        }
    }

    /** Undoes {@link #lift}: in the reverse order, so each entry's neighbours are as when it left. */
    void unlift(int call) {
        if (hasReturn(call)) {
            relink(returnOf[call]);
        }
        relink(call);
    }

    private void unlink(int entry) {
        next[previous[entry]] = next[entry];
        if (next[entry] != NONE) {
            previous[next[entry]] = previous[entry];
        }
    }

    private void relink(int entry) {
        next[previous[entry]] = entry;
        if (next[entry] != NONE) {
            previous[next[entry]] = entry;
        }
    }
}
