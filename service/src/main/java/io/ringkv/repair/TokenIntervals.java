package io.ringkv.repair;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Predicate;

import io.ringkv.ring.HashRing;
import io.ringkv.ring.TokenRange.Interval;
import io.ringkv.ring.TokenIntervalSet;
import io.ringkv.ring.TokenRange;

/**
 * Which tokens two members have to compare or move, as few inclusive intervals as possible. Plain
 * Java over the rings: repair asks "the ranges both of us hold", data movement "the ranges I hold
 * now that you will hold". Tokens compare as signed longs.
 */
public final class TokenIntervals {

    private TokenIntervals() {
    }

    /**
     * The ring cut at every point of every given ring: within one piece, each ring gives the same
     * owners to all the tokens.
     */
    public static List<TokenRange> cut(HashRing... rings) {
        TreeSet<Long> points = new TreeSet<>();
        for (HashRing ring : rings) {
            ring.ranges().forEach(range -> points.add(range.upTo()));
        }
        List<TokenRange> pieces = new ArrayList<>(points.size());
        long previous = points.last();
        for (long point : points) {
            pieces.add(new TokenRange(previous, point));
            previous = point;
        }
        return pieces;
    }

    /** Whether a member is among the first {@code factor} owners (or every member, if fewer) of a piece. */
    public static boolean owns(HashRing ring, int factor, TokenRange piece, String member) {
        return ring.names().contains(member)
                && ring.replicasFor(piece, Math.min(factor, ring.size())).contains(member);
    }

    /**
     * The tokens {@code member} owns in none of the given rings (among the first {@code factor}
     * owners): what it keeps only as a leftover of an earlier ring, and may drop.
     */
    public static List<Interval> ownedInNone(List<HashRing> rings, int factor, String member) {
        return where(cut(rings.toArray(HashRing[]::new)), piece -> ownsInNone(rings, factor, piece, member));
    }

    /**
     * Of the tokens {@code member} owns in none of the rings, those {@code owner} owns in
     * {@code ring}: what a cleanup hands to that owner before it drops them.
     */
    public static List<Interval> leftoversOwnedBy(List<HashRing> rings, int factor, String member, HashRing ring, String owner) {
        return where(cut(rings.toArray(HashRing[]::new)),
                piece -> ownsInNone(rings, factor, piece, member) && owns(ring, factor, piece, owner));
    }

    private static boolean ownsInNone(List<HashRing> rings, int factor, TokenRange piece, String member) {
        return rings.stream().noneMatch(ring -> owns(ring, factor, piece, member));
    }

    /**
     * What moves from {@code source} to {@code receiver} while members join or leave: the tokens
     * the source owns now (among the first {@code factor} owners in {@code current}) that the
     * receiver will own (in {@code future}). A joining node pulls this from each current owner; a
     * leaving node pushes it to each future owner, including the ranges both already hold, since the
     * leaving copy may be the only newest one.
     */
    public static List<Interval> moving(HashRing current, HashRing future, int factor, String source, String receiver) {
        return where(cut(current, future), piece -> owns(current, factor, piece, source) && owns(future, factor, piece, receiver));
    }

    /**
     * What a joining {@code receiver} would miss if it joined having pulled only from the
     * {@code pulled} members: the tokens it will own (in {@code future}) whose current owners
     * (the first {@code factor} in {@code current}) were not pulled from enough to be sure of every
     * write acknowledged by a majority of them. Such a write is on at least a majority of the
     * piece's {@code n} owners, so it is on one of any {@code n - (n / 2 + 1) + 1} of them. Empty
     * when the pull found everything written at the default {@code replicas}; a write at less than
     * a majority may still be only on an owner that was not pulled from.
     */
    public static List<Interval> notCoveredByMajorityWrites(HashRing current, HashRing future, int factor, String receiver,
            Set<String> pulled) {
        return where(cut(current, future), piece -> {
            if (!owns(future, factor, piece, receiver)) {
                return false;
            }
            List<String> owners = current.replicasFor(piece, Math.min(factor, current.size()));
            int enough = owners.size() - (owners.size() / 2 + 1) + 1;
            return owners.stream().filter(pulled::contains).count() < enough;
        });
    }

    /** The pieces that pass the test, as sorted, merged intervals. */
    public static List<Interval> where(List<TokenRange> pieces, Predicate<TokenRange> test) {
        return coalesce(pieces.stream().filter(test).toList());
    }

    /** Sorted, non-overlapping intervals covering exactly the given ranges; adjacent ones merged. */
    public static List<Interval> coalesce(Collection<TokenRange> ranges) {
        List<Interval> intervals = new ArrayList<>();
        ranges.forEach(range -> intervals.addAll(range.intervals()));
        return TokenIntervalSet.merge(intervals);
    }

    /** Splits an interval into at most {@code parts} consecutive ones of (nearly) equal width. */
    public static List<Interval> split(Interval interval, int parts) {
        // The width as an unsigned number: a whole-ring interval is 2^64 - 1 tokens wide.
        long width = interval.high() - interval.low();
        long step = Long.divideUnsigned(width, parts);
        if (step == 0) {
            return List.of(interval);
        }
        List<Interval> pieces = new ArrayList<>(parts);
        long low = interval.low();
        for (int i = 0; i < parts - 1; i++) {
            long high = low + step - 1;
            pieces.add(new Interval(low, high));
            low = high + 1;
        }
        pieces.add(new Interval(low, interval.high()));
        return pieces;
    }

    /** The intervals as the protocol sends them: low, high, low, high, ... */
    public static long[] flatten(List<Interval> intervals) {
        long[] bounds = new long[2 * intervals.size()];
        for (int i = 0; i < intervals.size(); i++) {
            bounds[2 * i] = intervals.get(i).low();
            bounds[2 * i + 1] = intervals.get(i).high();
        }
        return bounds;
    }
}
