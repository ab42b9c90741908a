package io.ringkv.ring;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;

import io.ringkv.ring.TokenRange.Interval;

/**
 * A set of tokens given as inclusive intervals (low, high, low, high, ..., as the peer protocol
 * sends them), asked whether it holds a token in logarithmic time: what a peer's stream of the
 * records of some token intervals filters its keys by. The intervals may come in any order and
 * overlap; they are sorted and merged once.
 */
public final class TokenIntervalSet {

    /** Sorted by low bound, none overlapping or adjacent. */
    private final long[] lows;
    private final long[] highs;

    private TokenIntervalSet(List<Interval> merged) {
        lows = merged.stream().mapToLong(Interval::low).toArray();
        highs = merged.stream().mapToLong(Interval::high).toArray();
    }

    /**
     * @param bounds low, high, low, high, ...: each pair inclusive, low at most high
     * @throws IllegalArgumentException for an odd count or a pair whose low is above its high
     */
    public static TokenIntervalSet of(long[] bounds) {
        if (bounds.length % 2 != 0) {
            throw new IllegalArgumentException("token intervals come in pairs: " + bounds.length + " bounds");
        }
        List<Interval> intervals = new ArrayList<>(bounds.length / 2);
        for (int i = 0; i < bounds.length; i += 2) {
            if (bounds[i] > bounds[i + 1]) {
                throw new IllegalArgumentException("token interval [" + bounds[i] + ", " + bounds[i + 1] + "] ends before it starts");
            }
            intervals.add(new Interval(bounds[i], bounds[i + 1]));
        }
        return new TokenIntervalSet(merge(intervals));
    }

    /** Sorted, non-overlapping intervals covering exactly the given ones (each low at most its high); adjacent ones merged. */
    public static List<Interval> merge(Collection<Interval> intervals) {
        List<Interval> sorted = new ArrayList<>(intervals);
        sorted.sort(Comparator.comparingLong(Interval::low));
        List<Interval> merged = new ArrayList<>();
        for (Interval next : sorted) {
            Interval last = merged.isEmpty() ? null : merged.getLast();
            if (last != null && (last.high() == Long.MAX_VALUE || next.low() <= last.high() + 1)) {
                merged.set(merged.size() - 1, new Interval(last.low(), Math.max(last.high(), next.high())));
            } else {
                merged.add(next);
            }
        }
        return merged;
    }

    public boolean contains(long token) {
        int found = Arrays.binarySearch(lows, token);
        // Not found: the insertion point, less one, is the last interval starting below the token.
        int candidate = found >= 0 ? found : -found - 2;
        return candidate >= 0 && token <= highs[candidate];
    }

    /** The merged intervals, as the protocol sends them: low, high, low, high, ... */
    public long[] bounds() {
        long[] bounds = new long[2 * lows.length];
        for (int i = 0; i < lows.length; i++) {
            bounds[2 * i] = lows[i];
            bounds[2 * i + 1] = highs[i];
        }
        return bounds;
    }
}
