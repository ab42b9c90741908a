package io.ringkv.ring;

import java.util.List;

/**
 * The keys whose token is after {@code after} and up to {@code upTo}, clockwise on the ring: a
 * range wraps past the largest token back to the smallest when {@code after >= upTo} (with one
 * point on the ring, one range is the whole ring). Tokens compare as signed longs.
 */
public record TokenRange(long after, long upTo) {

    /** An inclusive interval of tokens, low to high. */
    public record Interval(long low, long high) {
    }

    /** Whether the range holds a token. */
    public boolean contains(long token) {
        return after < upTo ? token > after && token <= upTo : token > after || token <= upTo;
    }

    /** The range as inclusive intervals in ascending order: one, or two where it wraps. */
    public List<Interval> intervals() {
        if (after < upTo) {
            return List.of(new Interval(after + 1, upTo));
        }
        if (after == Long.MAX_VALUE) {
            return List.of(new Interval(Long.MIN_VALUE, upTo));
        }
        return List.of(new Interval(Long.MIN_VALUE, upTo), new Interval(after + 1, Long.MAX_VALUE));
    }
}
