package io.ringkv.health;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class LatencyEstimateTest {

    @Test
    void isZeroUntilMeasuredThenTheFirstCall() {
        LatencyEstimate estimate = new LatencyEstimate(0.2);
        assertThat(estimate.millis()).isZero();
        estimate.record(40);
        assertThat(estimate.millis()).isEqualTo(40);
    }

    @Test
    void movesTowardsNewCallsByTheirWeight() {
        LatencyEstimate estimate = new LatencyEstimate(0.2);
        estimate.record(10);
        estimate.record(60);
        assertThat(estimate.millis()).isCloseTo(20, within(1e-9));
    }

    @Test
    void forgetsAnOldSlowSpellWithinAFewDozenCalls() {
        LatencyEstimate estimate = new LatencyEstimate(0.2);
        estimate.record(500);
        for (int i = 0; i < 30; i++) {
            estimate.record(1);
        }
        assertThat(estimate.millis()).isLessThan(2);
    }

    @Test
    void rejectsAWeightOutsideZeroToOne() {
        assertThatThrownBy(() -> new LatencyEstimate(0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new LatencyEstimate(1.5)).isInstanceOf(IllegalArgumentException.class);
    }
}
