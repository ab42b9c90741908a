package io.ringkv.testing.linearizability;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;

/**
 * Histories of an atomic register store, for testing the checker: clients each issue operations one
 * after another on a few keys, with random intervals that overlap other clients'; every operation
 * takes effect at one instant inside its interval (an indeterminate write: at any instant after its
 * call, or never), and its result is what the store holds at that instant. Such a history is
 * linearizable by construction. Every write writes a value of its own, so a value read tells which
 * write it came from.
 */
final class RandomHistories {

    /** One operation being generated: its interval and the instant it takes effect. */
    private record Slot(int client, long call, long returned, long effect) {
    }

    private final Random random;
    private final List<String> keys;
    private final int unknownPercent;
    private int written;

    /** Histories on {@code keys}, where {@code unknownPercent} of the writes end indeterminate. */
    RandomHistories(long seed, List<String> keys, int unknownPercent) {
        this.random = new Random(seed);
        this.keys = keys;
        this.unknownPercent = unknownPercent;
    }

    /**
     * {@code clients} clients each doing {@code perClient} operations; each waits up to {@code maxGap}
     * between operations, which last up to {@code maxDuration}: the larger the duration against the
     * gap, the more operations overlap.
     */
    List<Operation> generate(int clients, int perClient, long maxGap, long maxDuration) {
        List<Slot> slots = new ArrayList<>();
        for (int client = 0; client < clients; client++) {
            long time = 0;
            for (int i = 0; i < perClient; i++) {
                long call = time + random.nextLong(maxGap + 1);
                long returned = call + random.nextLong(maxDuration + 1);
                slots.add(new Slot(client, call, returned, call + random.nextLong(returned - call + 1)));
                time = returned;
            }
        }
        // A client's operations follow one another, so each one's effect comes after the previous
        // one's: in this order what a client last read is known when it picks its next condition.
        slots.sort(Comparator.comparingLong(Slot::effect));
        Map<String, Optional<String>> store = new HashMap<>();
        Map<String, Optional<String>> lastRead = new HashMap<>();
        List<Operation> history = new ArrayList<>();
        List<Pending> late = new ArrayList<>();
        for (Slot slot : slots) {
            applyLateWrites(late, slot.effect(), store);
            String key = keys.get(random.nextInt(keys.size()));
            Optional<String> current = store.getOrDefault(key, Optional.empty());
            if (random.nextInt(100) < 35) {
                history.add(random.nextInt(100) < 3
                        ? Operation.unknownRead(slot.client(), key, slot.call(), slot.returned())
                        : Operation.read(slot.client(), key, slot.call(), slot.returned(), current));
                lastRead.put(slot.client() + "/" + key, current);
                continue;
            }
            Expect expect = expect(lastRead.getOrDefault(slot.client() + "/" + key, Optional.empty()));
            Optional<String> value = random.nextInt(100) < 10 ? Optional.empty() : Optional.of("v" + written++);
            if (random.nextInt(100) < unknownPercent) {
                history.add(Operation.write(slot.client(), key, slot.call(), slot.returned(), expect, value, Result.UNKNOWN));
                // An indeterminate write takes effect some time after its call, maybe long after its
                // client gave up on it, or never.
                if (random.nextBoolean()) {
                    late.add(new Pending(slot.call() + random.nextLong(3 * (slot.returned() - slot.call()) + 1), key, expect, value));
                }
                continue;
            }
            boolean holds = expect.holds(current);
            history.add(Operation.write(slot.client(), key, slot.call(), slot.returned(), expect, value, holds ? Result.OK : Result.FAILED));
            if (holds) {
                store.put(key, value);
            }
        }
        return history;
    }

    /** An indeterminate write that will take effect at {@code effect}. */
    private record Pending(long effect, String key, Expect expect, Optional<String> value) {
    }

    private static void applyLateWrites(List<Pending> late, long until, Map<String, Optional<String>> store) {
        late.sort(Comparator.comparingLong(Pending::effect));
        while (!late.isEmpty() && late.getFirst().effect() <= until) {
            Pending write = late.removeFirst();
            if (write.expect().holds(store.getOrDefault(write.key(), Optional.empty()))) {
                store.put(write.key(), write.value());
            }
        }
    }

    private Expect expect(Optional<String> lastRead) {
        int draw = random.nextInt(100);
        if (draw < 25) {
            return Expect.ANY;
        } else if (draw < 45) {
            return Expect.ABSENT;
        } else if (draw < 60) {
            return Expect.PRESENT;
        }
        // A compare-and-set on what this client last read of the key, as a client does with the etag.
        return lastRead.map(Expect::value).orElse(Expect.ABSENT);
    }

    /**
     * The history with one read made stale: it now sees the value of an older write that another
     * write, finished before the read was called, had already replaced. Since no other write wrote
     * that value, no order explains the read. Empty if the history has no such read.
     */
    static Optional<List<Operation>> withStaleRead(List<Operation> history, Random random) {
        record Stale(int read, Optional<String> value) {
        }
        List<Stale> candidates = new ArrayList<>();
        for (int i = 0; i < history.size(); i++) {
            if (history.get(i) instanceof Operation.Read read && read.result() == Result.OK) {
                for (Operation older : history) {
                    if (older instanceof Operation.Write old && settled(old, read) && old.newValue().isPresent()
                            && !old.newValue().equals(read.observed()) && replacedBefore(old, read, history)) {
                        candidates.add(new Stale(i, old.newValue()));
                    }
                }
            }
        }
        if (candidates.isEmpty()) {
            return Optional.empty();
        }
        Stale stale = candidates.get(random.nextInt(candidates.size()));
        Operation read = history.get(stale.read());
        List<Operation> corrupted = new ArrayList<>(history);
        corrupted.set(stale.read(), Operation.read(read.client(), read.key(), read.callNanos(), read.returnNanos(), stale.value()));
        return Optional.of(corrupted);
    }

    /** Whether {@code write} certainly took effect on the read's key and returned before {@code read} was called. */
    private static boolean settled(Operation.Write write, Operation.Read read) {
        return write.key().equals(read.key()) && write.result() == Result.OK && write.returnNanos() < read.callNanos();
    }

    /** Whether a write that took effect, called after {@code old} returned, returned before {@code read} was called. */
    private static boolean replacedBefore(Operation.Write old, Operation.Read read, List<Operation> history) {
        return history.stream().anyMatch(operation -> operation instanceof Operation.Write newer && settled(newer, read)
                && newer.callNanos() > old.returnNanos());
    }
}
