package io.ringkv.testing.linearizability;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The search for a linearization of one key's history: Wing and Gong's depth-first search with
 * Lowe's memoisation, iteratively as in Porcupine's {@code checkSingle}. Walking the entries in
 * time order, it places a pending call that the register accepts and starts again from the first
 * entry; reaching a return whose operation is not placed, it undoes the last placement and tries
 * the next call after it. It succeeds once every operation that returned is placed (an
 * indeterminate write may stay unplaced: it never took effect), and fails when it must undo with
 * nothing placed.
 *
 * <p>The memo (Lowe's): a configuration, the operations placed and the state, reached before
 * leads where it led before, so it is not explored twice. Indeterminate writes make that too weak:
 * they have no return, so every one called stays a free choice to the end, and the placed sets
 * multiply by two with each. But having placed more of them only takes choices away, so a
 * configuration whose exploration failed also rules out any with the same returned operations
 * placed, the same state and a superset of its indeterminate writes placed. Only failed
 * configurations are used that way, so that none is ruled out by one still being explored.
 *
 * <p>Beyond that the search skips orders that can only fit where another order, which it does try,
 * fits too; so it still finds a linearization whenever there is one (the unit tests hold its
 * verdicts against trying every order):
 * <ul>
 * <li>A pending operation that leaves the state as it is (a read, a failed write) and fits now can
 * always go first: moved to the front of any order that fits, it still fits. So those are tried
 * first, and once one is placed the search never tries the alternatives to it: if nothing fits
 * after it, nothing fits at all. Only the order of the writes is searched.
 * <li>Indeterminate writes are tried last at each point, so that the configurations with fewer of
 * them placed are explored, and fail, first, and rule out the others.
 * <li>An indeterminate write is placed only where it changes the state, and is not followed right
 * away by an operation that would have had the same outcome without it (an unconditional write,
 * say, which hides it): such an order is no better than the same without that write, which stays
 * free for later.
 * </ul>
 */
final class Search {

    /** The kinds of pending calls tried at each point, in this order. */
    private enum Phase {
        /** Reads and failed writes, which leave the state as it is. */
        KEEPING,
        /** Writes that took effect. */
        CHANGING,
        /** Indeterminate writes. */
        UNKNOWN
    }

    /**
     * What the memo is looked up by: the returned operations placed, the state, and if the last
     * operation placed is an indeterminate write, the state before it ({@link #NO_WRITE} if not),
     * since that decides which operations may follow.
     */
    private record Reached(BitSet placed, int state, int beforeUnknown) {
    }

    private static final int NO_WRITE = -1;

    /** The indeterminate writes placed in one configuration explored, and whether its exploration failed. */
    private static final class Explored {
        final BitSet unknown;
        boolean failed;

        Explored(BitSet unknown) {
            this.unknown = unknown;
        }

        boolean rulesOut(BitSet placedUnknown) {
            if (!failed) {
                return false;
            }
            for (int op = unknown.nextSetBit(0); op >= 0; op = unknown.nextSetBit(op + 1)) {
                if (!placedUnknown.get(op)) {
                    return false;
                }
            }
            return true;
        }
    }

    private final String key;
    private final List<Operation> operations;
    private final long maxSteps;
    private final Register register;
    private final Entries entries;
    private final Phase[] phases;
    private final Map<Reached, List<Explored>> memo = new HashMap<>();

    // Where the search is: the state, the operations placed (those that returned, and the
    // indeterminate writes), and the undo stack: each placed call, with the state and
    // beforeUnknown before it and its configuration in the memo.
    private int state = Register.ABSENT;
    private int beforeUnknown = NO_WRITE;
    private final BitSet placed;
    private final BitSet placedUnknown;
    private int unplacedReturns;
    private final int[] placedCalls;
    private final int[] statesBefore;
    private final int[] beforeUnknowns;
    private final Explored[] configurations;
    private int depth;
    // Where the walk is: the entry, and the kind of calls it is trying.
    private int entry;
    private Phase phase = Phase.KEEPING;

    private Impasse furthest;
    private int furthestReturn = Entries.NONE;

    Search(String key, List<Operation> operations, long maxSteps) {
        this.key = key;
        this.operations = operations;
        this.maxSteps = maxSteps;
        this.register = new Register(operations);
        this.entries = new Entries(operations);
        int count = operations.size();
        this.phases = new Phase[count];
        for (int op = 0; op < count; op++) {
            Operation operation = operations.get(op);
            phases[op] = switch (operation.result()) {
                case UNKNOWN -> Phase.UNKNOWN;
                case FAILED -> Phase.KEEPING;
                case OK -> operation instanceof Operation.Read ? Phase.KEEPING : Phase.CHANGING;
            };
        }
        this.placed = new BitSet(count);
        this.placedUnknown = new BitSet(count);
        this.unplacedReturns = entries.returns();
        this.placedCalls = new int[count];
        this.statesBefore = new int[count];
        this.beforeUnknowns = new int[count];
        this.configurations = new Explored[count];
    }

    KeyVerdict run() {
        long steps = 0;
        entry = entries.first();
        // While a return is in the list the walk meets it before running off the end, so entry is
        // never NONE inside the loop.
        while (unplacedReturns > 0) {
            if (entries.isCall(entry)) {
                int op = entries.operation(entry);
                if (phases[op] != phase) {
                    entry = entries.next(entry);
                    continue;
                }
                if (++steps > maxSteps) {
                    return verdict(KeyVerdict.Outcome.TOO_LARGE, steps - 1);
                }
                int after = admissible(op);
                Explored configuration = after == Register.REJECTED ? null : visit(op, after);
                if (configuration != null) {
                    place(op, after, configuration);
                } else if (after != Register.REJECTED && phase == Phase.KEEPING) {
                    // It could go first, so a failure after it, found before, is a failure here.
                    if (!backtrack()) {
                        return verdict(KeyVerdict.Outcome.VIOLATION, steps);
                    }
                } else {
                    entry = entries.next(entry);
                }
            } else if (phase == Phase.KEEPING || (phase == Phase.CHANGING && entries.hasUnknown())) {
                phase = Phase.values()[phase.ordinal() + 1];
                entry = entries.first();
            } else {
                noteImpasse(entry);
                if (!backtrack()) {
                    return verdict(KeyVerdict.Outcome.VIOLATION, steps);
                }
            }
        }
        return verdict(KeyVerdict.Outcome.OK, steps);
    }

    /** The state after {@code op} if it may be placed next, or {@link Register#REJECTED}. */
    private int admissible(int op) {
        int after = register.step(state, op);
        boolean sameWithoutLastWrite = beforeUnknown != NO_WRITE && register.step(beforeUnknown, op) == after;
        return sameWithoutLastWrite ? Register.REJECTED : after;
    }

    /**
     * Marks {@code op} placed, leading to {@code after}, and enters the configuration in the memo;
     * or, if the memo rules it out, leaves {@code op} unmarked and answers null.
     */
    private Explored visit(int op, int after) {
        BitSet set = phases[op] == Phase.UNKNOWN ? placedUnknown : placed;
        int nextBeforeUnknown = phases[op] == Phase.UNKNOWN ? state : NO_WRITE;
        set.set(op);
        // Looked up with the live set, which is copied only for a new entry: most visits are repeats.
        List<Explored> seen = memo.get(new Reached(placed, after, nextBeforeUnknown));
        if (seen == null) {
            seen = new ArrayList<>(1);
            memo.put(new Reached((BitSet) placed.clone(), after, nextBeforeUnknown), seen);
        } else if (seen.stream().anyMatch(explored -> explored.rulesOut(placedUnknown))) {
            set.clear(op);
            return null;
        }
        Explored configuration = new Explored((BitSet) placedUnknown.clone());
        seen.add(configuration);
        return configuration;
    }

    /** Places the call at {@code entry}, whose operation {@link #visit} has marked, and walks on from the start. */
    private void place(int op, int after, Explored configuration) {
        placedCalls[depth] = entry;
        statesBefore[depth] = state;
        beforeUnknowns[depth] = beforeUnknown;
        configurations[depth] = configuration;
        depth++;
        beforeUnknown = phases[op] == Phase.UNKNOWN ? state : NO_WRITE;
        state = after;
        if (entries.hasReturn(entry)) {
            unplacedReturns--;
        }
        entries.lift(entry);
        entry = entries.first();
        phase = Phase.KEEPING;
    }

    /**
     * Undoes placements back to the last one that was a choice, and sets the walk on the call after
     * it; false if there is none, when no order fits. An operation that kept the state was no
     * choice: what failed after it fails without it.
     */
    private boolean backtrack() {
        Phase undone;
        do {
            if (depth == 0) {
                return false;
            }
            depth--;
            configurations[depth].failed = true;
            int call = placedCalls[depth];
            int op = entries.operation(call);
            state = statesBefore[depth];
            beforeUnknown = beforeUnknowns[depth];
            (phases[op] == Phase.UNKNOWN ? placedUnknown : placed).clear(op);
            entries.unlift(call);
            if (entries.hasReturn(call)) {
                unplacedReturns++;
            }
            undone = phases[op];
            entry = entries.next(call);
        } while (undone == Phase.KEEPING);
        phase = undone;
        return true;
    }

    /** Keeps the impasse furthest into the history, the one a reader of the log needs. */
    private void noteImpasse(int returnEntry) {
        if (returnEntry <= furthestReturn) {
            return;
        }
        furthestReturn = returnEntry;
        List<Operation> order = new ArrayList<>(depth);
        for (int i = 0; i < depth; i++) {
            order.add(operations.get(entries.operation(placedCalls[i])));
        }
        List<Operation> pending = new ArrayList<>();
        for (int call = entries.first(); call != returnEntry; call = entries.next(call)) {
            pending.add(operations.get(entries.operation(call)));
        }
        furthest = new Impasse(order, register.value(state), operations.get(entries.operation(returnEntry)), pending);
    }

    private KeyVerdict verdict(KeyVerdict.Outcome outcome, long steps) {
        String explanation = switch (outcome) {
            case OK -> "";
            case VIOLATION -> "key \"%s\" is not linearizable (%s).\n%s".formatted(key, counted(), stuck());
            case TOO_LARGE -> ("key \"%s\": the search gave up after %d steps (its budget) without finding a linearization"
                    + " of its %s or ruling one out; furthest it got:\n%s").formatted(key, steps, counted(), stuck());
        };
        return new KeyVerdict(key, outcome, operations.size(), steps, explanation);
    }

    private String counted() {
        return operations.size() == 1 ? "1 operation" : operations.size() + " operations";
    }

    private String stuck() {
        if (furthest == null) {
            return "  (it never had to backtrack)\n";
        }
        long origin = operations.stream().mapToLong(Operation::callNanos).min().orElse(0);
        return furthest.describe(origin);
    }
}
