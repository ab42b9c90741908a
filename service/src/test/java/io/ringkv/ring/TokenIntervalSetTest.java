package io.ringkv.ring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

class TokenIntervalSetTest {

    @Test
    void holdsExactlyTheTokensOfItsIntervalsBoundsIncluded() {
        TokenIntervalSet set = TokenIntervalSet.of(new long[] {100, 200, -50, -10});
        assertThat(set.contains(-51)).isFalse();
        assertThat(set.contains(-50)).isTrue();
        assertThat(set.contains(-10)).isTrue();
        assertThat(set.contains(-9)).isFalse();
        assertThat(set.contains(99)).isFalse();
        assertThat(set.contains(100)).isTrue();
        assertThat(set.contains(200)).isTrue();
        assertThat(set.contains(201)).isFalse();
        assertThat(set.contains(Long.MIN_VALUE)).isFalse();
        assertThat(set.contains(Long.MAX_VALUE)).isFalse();
    }

    @Test
    void theWholeRingHoldsEveryToken() {
        TokenIntervalSet ring = TokenIntervalSet.of(new long[] {Long.MIN_VALUE, Long.MAX_VALUE});
        assertThat(ring.contains(Long.MIN_VALUE)).isTrue();
        assertThat(ring.contains(0)).isTrue();
        assertThat(ring.contains(Long.MAX_VALUE)).isTrue();
        assertThat(TokenIntervalSet.of(new long[0]).contains(0)).as("no interval, no token").isFalse();
    }

    @Test
    void overlappingAndAdjacentIntervalsAreMerged() {
        TokenIntervalSet set = TokenIntervalSet.of(new long[] {10, 20, 0, 15, 21, 30, 40, 50, 45, Long.MAX_VALUE});
        assertThat(set.bounds()).containsExactly(0, 30, 40, Long.MAX_VALUE);
        // An interval inside an earlier, longer one must not hide the rest of that one.
        TokenIntervalSet nested = TokenIntervalSet.of(new long[] {0, 100, 10, 20});
        assertThat(nested.contains(50)).isTrue();
    }

    @Test
    void agreesWithAPlainScanOnRandomIntervals() {
        SplittableRandom random = new SplittableRandom(7);
        for (int round = 0; round < 200; round++) {
            long[] bounds = new long[2 * (1 + random.nextInt(8))];
            for (int i = 0; i < bounds.length; i += 2) {
                long low = random.nextLong(-1000, 1000);
                bounds[i] = low;
                bounds[i + 1] = low + random.nextLong(0, 200);
            }
            TokenIntervalSet set = TokenIntervalSet.of(bounds);
            for (long token = -1100; token <= 1300; token++) {
                boolean inAny = false;
                for (int i = 0; i < bounds.length; i += 2) {
                    inAny |= token >= bounds[i] && token <= bounds[i + 1];
                }
                assertThat(set.contains(token)).as("token %d in %s", token, java.util.Arrays.toString(bounds)).isEqualTo(inAny);
            }
        }
    }

    @Test
    void aMalformedListIsRefused() {
        assertThatThrownBy(() -> TokenIntervalSet.of(new long[] {1, 2, 3})).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("pairs");
        assertThatThrownBy(() -> TokenIntervalSet.of(new long[] {5, 4})).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("ends before it starts");
    }
}
