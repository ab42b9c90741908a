package io.ringkv.ring;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import com.dynatrace.hash4j.hashing.Hasher64;
import com.dynatrace.hash4j.hashing.Hashing;

/**
 * A consistent-hash ring with virtual nodes. Each member is placed at {@code vnodes} points, the
 * hashes of its stable name (its attributes play no part); a key belongs to the first distinct members found clockwise from
 * the key's hash. Adding or removing a member moves only the keys next to its points, and the
 * replicas for a smaller count are always a prefix of those for a larger one.
 *
 * <p>Immutable: a membership change builds a new ring.
 */
public final class HashRing {

    /** Enough points per member for an even share (HashRingTest measures it); ringkv.cluster.vnodes' default. */
    public static final int DEFAULT_VNODES = 256;

    /** XXH3: fast on short keys and well distributed; the ring depends on it never changing. */
    private static final Hasher64 HASH = Hashing.xxh3_64();

    private final List<Member> members;
    private final List<String> names;
    private final long[] points;
    private final int[] owners;

    /** @param members distinct names; where one is given twice, the last one given stands */
    public HashRing(Collection<Member> members, int vnodes) {
        if (members.isEmpty()) {
            throw new IllegalArgumentException("a ring needs at least one member");
        }
        if (vnodes < 1) {
            throw new IllegalArgumentException("vnodes must be positive");
        }
        Map<String, Member> byName = new TreeMap<>();
        members.forEach(member -> byName.put(member.name(), member));
        this.members = List.copyOf(byName.values());
        this.names = List.copyOf(byName.keySet());
        int count = this.members.size() * vnodes;
        long[] unsortedPoints = new long[count];
        Integer[] order = new Integer[count];
        for (int m = 0; m < this.members.size(); m++) {
            for (int v = 0; v < vnodes; v++) {
                int i = m * vnodes + v;
                unsortedPoints[i] = HASH.hashBytesToLong(
                        (names.get(m) + "#" + v).getBytes(StandardCharsets.UTF_8));
                order[i] = i;
            }
        }
        // Ties between two members' points (astronomically rare) fall to the member sorted first.
        Arrays.sort(order, (a, b) -> {
            int byPoint = Long.compare(unsortedPoints[a], unsortedPoints[b]);
            return byPoint != 0 ? byPoint : Integer.compare(a, b);
        });
        points = new long[count];
        owners = new int[count];
        for (int i = 0; i < count; i++) {
            points[i] = unsortedPoints[order[i]];
            owners[i] = order[i] / vnodes;
        }
    }

    /** The members in name order. */
    public List<Member> members() {
        return members;
    }

    /** The members' names, in order. */
    public List<String> names() {
        return names;
    }

    public int size() {
        return members.size();
    }

    /** A key's position on the ring. */
    public static long token(byte[] key) {
        return HASH.hashBytesToLong(key);
    }

    /** The names of the first {@code count} distinct members clockwise from the key's hash, the key's primary first. */
    public List<String> replicasFor(byte[] key, int count) {
        return replicasForToken(token(key), count);
    }

    /** The first {@code count} distinct members clockwise from a token, its primary first. */
    public List<String> replicasForToken(long token, int count) {
        if (count < 1 || count > members.size()) {
            throw new IllegalArgumentException("count must be between 1 and " + members.size());
        }
        int start = Arrays.binarySearch(points, token);
        if (start < 0) {
            start = -start - 1;
        }
        List<String> replicas = new ArrayList<>(count);
        boolean[] taken = new boolean[members.size()];
        for (int step = 0; replicas.size() < count; step++) {
            int owner = owners[(start + step) % points.length];
            if (!taken[owner]) {
                taken[owner] = true;
                replicas.add(names.get(owner));
            }
        }
        return replicas;
    }

    /**
     * The ring cut at every point into ranges, in ring order; all the keys of a range have the
     * same replicas (those of its end point).
     */
    public List<TokenRange> ranges() {
        List<TokenRange> ranges = new ArrayList<>(points.length);
        for (int i = 0; i < points.length; i++) {
            long after = points[i == 0 ? points.length - 1 : i - 1];
            ranges.add(new TokenRange(after, points[i]));
        }
        return ranges;
    }

    /** The first {@code count} distinct members that hold a range's keys. */
    public List<String> replicasFor(TokenRange range, int count) {
        return replicasForToken(range.upTo(), count);
    }

    @Override
    public String toString() {
        return "HashRing" + names;
    }
}
