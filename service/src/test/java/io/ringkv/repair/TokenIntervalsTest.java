package io.ringkv.repair;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.ringkv.ring.HashRing;
import io.ringkv.ring.Member;
import io.ringkv.ring.TokenRange.Interval;
import io.ringkv.ring.TokenRange;

class TokenIntervalsTest {

    private static final BigInteger RING = BigInteger.ONE.shiftLeft(64);

    private static BigInteger width(List<Interval> intervals) {
        return intervals.stream()
                .map(i -> BigInteger.valueOf(i.high()).subtract(BigInteger.valueOf(i.low())).add(BigInteger.ONE))
                .reduce(BigInteger.ZERO, BigInteger::add);
    }

    @Test
    void theCutPiecesCoverTheRingOnce() {
        HashRing three = new HashRing(Member.named(List.of("a", "b", "c")), 8);
        HashRing four = new HashRing(Member.named(List.of("a", "b", "c", "d")), 8);
        List<TokenRange> pieces = TokenIntervals.cut(three, four);
        assertThat(pieces).hasSize(32);
        assertThat(width(TokenIntervals.coalesce(pieces))).isEqualTo(RING);
        assertThat(TokenIntervals.coalesce(pieces)).containsExactly(new Interval(Long.MIN_VALUE, Long.MAX_VALUE));
    }

    @Test
    void withEveryMemberAReplicaEachSharesTheWholeRing() {
        HashRing three = new HashRing(Member.named(List.of("a", "b", "c")), 16);
        var shared = TokenIntervals.where(TokenIntervals.cut(three),
                piece -> TokenIntervals.owns(three, 3, piece, "a") && TokenIntervals.owns(three, 3, piece, "b"));
        assertThat(shared).containsExactly(new Interval(Long.MIN_VALUE, Long.MAX_VALUE));
    }

    @Test
    void aJoiningMemberTakesAboutItsShareAndOnlyFromTheCurrentOwners() {
        HashRing three = new HashRing(Member.named(List.of("a", "b", "c")), 64);
        HashRing four = new HashRing(Member.named(List.of("a", "b", "c", "d")), 64);
        List<TokenRange> pieces = TokenIntervals.cut(three, four);
        var toD = TokenIntervals.where(pieces, piece -> TokenIntervals.owns(four, 2, piece, "d"));
        double share = new java.math.BigDecimal(width(toD)).divide(new java.math.BigDecimal(RING)).doubleValue();
        assertThat(share).as("d holds 2 of 4 replicas of each key: half the ring").isBetween(0.35, 0.65);
        assertThat(TokenIntervals.owns(three, 2, pieces.get(0), "d")).isFalse();
    }

    private static boolean covers(List<Interval> intervals, long token) {
        return intervals.stream().anyMatch(interval -> token >= interval.low() && token <= interval.high());
    }

    @Test
    void aJoiningMemberPullsEachKeyItWillOwnFromExactlyItsCurrentOwners() {
        HashRing current = new HashRing(Member.named(List.of("a", "b", "c")), 32);
        HashRing future = new HashRing(Member.named(List.of("a", "b", "c", "d")), 32);
        java.util.Map<String, List<Interval>> fromEach = new java.util.HashMap<>();
        for (String source : List.of("a", "b", "c")) {
            fromEach.put(source, TokenIntervals.moving(current, future, 2, source, "d"));
        }
        var random = new java.util.Random(7);
        int owned = 0;
        for (int i = 0; i < 5_000; i++) {
            byte[] key = ("key-" + random.nextInt()).getBytes(java.nio.charset.StandardCharsets.UTF_8);
            long token = HashRing.token(key);
            boolean dWillOwn = future.replicasFor(key, 2).contains("d");
            owned += dWillOwn ? 1 : 0;
            for (String source : List.of("a", "b", "c")) {
                boolean expected = dWillOwn && current.replicasFor(key, 2).contains(source);
                assertThat(covers(fromEach.get(source), token)).as("%s from %s", new String(key), source).isEqualTo(expected);
            }
        }
        assertThat(owned).as("d owns about half the keys at RF 2 of 4").isBetween(1_500, 3_500);
    }

    @Test
    void aJoinThatReachedTwoOfEachKeysThreeOwnersHasEveryMajorityWrite() {
        HashRing current = new HashRing(Member.named(List.of("a", "b", "c", "d")), 32);
        HashRing future = new HashRing(Member.named(List.of("a", "b", "c", "d", "e")), 32);
        assertThat(TokenIntervals.notCoveredByMajorityWrites(current, future, 3, "e", java.util.Set.of("a", "b", "c", "d")))
                .as("every owner pulled").isEmpty();

        // d unreachable: every key e will own had at most one of its three owners unpulled.
        assertThat(TokenIntervals.notCoveredByMajorityWrites(current, future, 3, "e", java.util.Set.of("a", "b", "c")))
                .isEmpty();

        // c and d unreachable: the keys whose owners are b, c, d (or a, c, d) were pulled from one.
        List<Interval> missing = TokenIntervals.notCoveredByMajorityWrites(current, future, 3, "e", java.util.Set.of("a", "b"));
        assertThat(missing).isNotEmpty();
        var random = new java.util.Random(3);
        for (int i = 0; i < 5_000; i++) {
            byte[] key = ("key-" + random.nextInt()).getBytes(java.nio.charset.StandardCharsets.UTF_8);
            long pulledOwners = current.replicasFor(key, 3).stream().filter(List.of("a", "b")::contains).count();
            boolean expected = future.replicasFor(key, 3).contains("e") && pulledOwners < 2;
            assertThat(covers(missing, HashRing.token(key))).as(new String(key)).isEqualTo(expected);
        }
    }

    @Test
    void inATwoMemberRingOneOwnerHasEveryMajorityWrite() {
        HashRing current = new HashRing(Member.named(List.of("a", "b")), 16);
        HashRing future = new HashRing(Member.named(List.of("a", "b", "c")), 16);
        // Each key is on both a and b; a majority of two is both, so either one has every such write.
        assertThat(TokenIntervals.notCoveredByMajorityWrites(current, future, 3, "c", java.util.Set.of("a"))).isEmpty();
        assertThat(TokenIntervals.notCoveredByMajorityWrites(current, future, 3, "c", java.util.Set.of()))
                .containsExactly(new Interval(Long.MIN_VALUE, Long.MAX_VALUE));
    }

    @Test
    void aLeavingMemberPushesEveryKeyItHoldsToEachOfItsFutureOwners() {
        HashRing current = new HashRing(Member.named(List.of("a", "b", "c", "d", "e")), 32);
        HashRing future = new HashRing(Member.named(List.of("a", "b", "c")), 32);
        java.util.Map<String, List<Interval>> toEach = new java.util.HashMap<>();
        for (String receiver : List.of("a", "b", "c")) {
            toEach.put(receiver, TokenIntervals.moving(current, future, 3, "e", receiver));
        }
        var random = new java.util.Random(11);
        for (int i = 0; i < 5_000; i++) {
            byte[] key = ("key-" + random.nextInt()).getBytes(java.nio.charset.StandardCharsets.UTF_8);
            long token = HashRing.token(key);
            boolean eHolds = current.replicasFor(key, 3).contains("e");
            for (String receiver : List.of("a", "b", "c")) {
                // With three left, each of them owns every key: all of what e holds goes to each.
                assertThat(covers(toEach.get(receiver), token)).isEqualTo(eHolds);
            }
        }
    }

    @Test
    void splitsIntoEqualPartsThatJoinUp() {
        List<Interval> parts = TokenIntervals.split(new Interval(Long.MIN_VALUE, Long.MAX_VALUE), 16);
        assertThat(parts).hasSize(16);
        assertThat(parts.get(0).low()).isEqualTo(Long.MIN_VALUE);
        assertThat(parts.get(15).high()).isEqualTo(Long.MAX_VALUE);
        for (int i = 1; i < parts.size(); i++) {
            assertThat(parts.get(i).low()).isEqualTo(parts.get(i - 1).high() + 1);
        }
        assertThat(TokenIntervals.split(new Interval(5, 7), 16)).containsExactly(new Interval(5, 7));
    }

    @Test
    void aWrappingRangeIsTwoIntervalsAndMergesWithItsNeighbours() {
        TokenRange wrap = new TokenRange(100, -100);
        assertThat(wrap.intervals()).containsExactly(new Interval(Long.MIN_VALUE, -100), new Interval(101, Long.MAX_VALUE));
        assertThat(TokenIntervals.coalesce(List.of(wrap, new TokenRange(-100, 100))))
                .containsExactly(new Interval(Long.MIN_VALUE, Long.MAX_VALUE));
        assertThat(TokenIntervals.flatten(wrap.intervals())).containsExactly(Long.MIN_VALUE, -100, 101, Long.MAX_VALUE);
    }

    /** What a member owns in none of the rings is exactly the keys none of them gives it among the first factor owners. */
    @Test
    void ownedInNoneIsWhatNoRingGivesTheMember() {
        HashRing three = new HashRing(Member.named(List.of("a", "b", "c")), 16);
        HashRing four = new HashRing(Member.named(List.of("a", "b", "c", "d")), 16);
        assertThat(TokenIntervals.ownedInNone(List.of(three), 3, "a")).as("at RF 3 of 3, a owns everything").isEmpty();
        List<Interval> leftovers = TokenIntervals.ownedInNone(List.of(four), 2, "a");
        List<Interval> leftoversOfBoth = TokenIntervals.ownedInNone(List.of(three, four), 2, "a");
        for (int i = 0; i < 5000; i++) {
            byte[] key = ("key-" + i).getBytes(StandardCharsets.UTF_8);
            long token = HashRing.token(key);
            assertThat(within(leftovers, token)).as("key-%d", i).isEqualTo(!four.replicasFor(key, 2).contains("a"));
            boolean ownedInEither = three.replicasFor(key, 2).contains("a") || four.replicasFor(key, 2).contains("a");
            assertThat(within(leftoversOfBoth, token)).as("key-%d in two rings", i).isEqualTo(!ownedInEither);
        }
    }

    private static boolean within(List<Interval> intervals, long token) {
        return intervals.stream().anyMatch(interval -> token >= interval.low() && token <= interval.high());
    }
}
