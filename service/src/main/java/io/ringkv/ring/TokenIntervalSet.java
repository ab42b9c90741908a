package io.ringkv.ring;

import java.util.Arrays;
import java.util.Comparator;

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

    private TokenIntervalSet(long[] lows, long[] highs) {
        this.lows = lows;
        this.highs = highs;
    }

    /**
     * @param bounds low, high, low, high, ...: each pair inclusive, low at most high
     * @throws IllegalArgumentException for an odd count or a pair whose low is above its high
     */
    public static TokenIntervalSet of(long[] bounds) {
        if (bounds.length % 2 != 0) {
            throw new IllegalArgumentException("token intervals come in pairs: " + bounds.length + " bounds");
        }
        long[][] pairs = new long[bounds.length / 2][];
        for (int i = 0; i < pairs.length; i++) {
            long low = bounds[2 * i];
            long high = bounds[2 * i + 1];
            if (low > high) {
                throw new IllegalArgumentException("token interval [" + low + ", " + high + "] ends before it starts");
            }
            pairs[i] = new long[] {low, high};
        }
        Arrays.sort(pairs, Comparator.comparingLong(pair -> pair[0]));
        long[] lows = new long[pairs.length];
        long[] highs = new long[pairs.length];
        int merged = 0;
        for (long[] pair : pairs) {
            if (merged > 0 && (highs[merged - 1] == Long.MAX_VALUE || pair[0] <= highs[merged - 1] + 1)) {
                highs[merged - 1] = Math.max(highs[merged - 1], pair[1]);
            } else {
                lows[merged] = pair[0];
                highs[merged] = pair[1];
                merged++;
            }
        }
        return new TokenIntervalSet(Arrays.copyOf(lows, merged), Arrays.copyOf(highs, merged));
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
