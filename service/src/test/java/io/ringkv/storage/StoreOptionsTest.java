package io.ringkv.storage;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class StoreOptionsTest {

    private static final long MIB = 1024 * 1024;

    @Test
    void eachNodeDrawsARecordMemtableBetweenThreeFifthsAndAllOfAnEighthOfItsBudget() {
        long memory = 128 * MIB;
        assertThat(StoreOptions.recordWriteBuffer(memory, 0)).isEqualTo((long) (16 * MIB * 0.6));
        assertThat(StoreOptions.recordWriteBuffer(memory, 0.5)).isEqualTo((long) (16 * MIB * 0.8));
        assertThat(StoreOptions.recordWriteBuffer(memory, Math.nextDown(1.0))).isLessThanOrEqualTo(16 * MIB).isGreaterThan(16 * MIB * 99 / 100);
    }

    @Test
    void theSizesStayWithinTheMemtableBounds() {
        // A small budget: never below the smallest memtable, drawn or not.
        assertThat(StoreOptions.recordWriteBuffer(16 * MIB, 0)).isEqualTo(4 * MIB);
        assertThat(StoreOptions.recordWriteBuffer(16 * MIB, Math.nextDown(1.0))).isEqualTo(4 * MIB);
        // A large one: an eighth is capped at 64 MiB before the draw.
        assertThat(StoreOptions.recordWriteBuffer(4096 * MIB, Math.nextDown(1.0))).isLessThanOrEqualTo(64 * MIB).isGreaterThan(63 * MIB);
        assertThat(StoreOptions.recordWriteBuffer(4096 * MIB, 0)).isEqualTo((long) (64 * MIB * 0.6));
    }
}
