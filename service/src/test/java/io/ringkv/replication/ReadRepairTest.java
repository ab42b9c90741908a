package io.ringkv.replication;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Optional;

import org.junit.jupiter.api.Test;

import io.ringkv.record.Record;


class ReadRepairTest {

    private static ReadRepair.Answer<String> answer(String replica, Record record) {
        return new ReadRepair.Answer<>(replica, Optional.ofNullable(record));
    }

    @Test
    void agreeingReplicasNeedNothing() {
        var plan = ReadRepair.plan(List.of(answer("a", Record.value(5, new byte[] {1})), answer("b", Record.value(5, new byte[] {1}))));
        assertThat(plan.needed()).isFalse();
        assertThat(plan.newest()).contains(Record.value(5, new byte[] {1}));
    }

    @Test
    void olderAndMissingVersionsAreStale() {
        var plan = ReadRepair.plan(List.of(
                answer("a", Record.value(5, new byte[] {1})),
                answer("b", Record.value(9, new byte[] {2})),
                answer("c", null)));
        assertThat(plan.newest()).contains(Record.value(9, new byte[] {2}));
        assertThat(plan.stale()).containsExactly("a", "c");
    }

    @Test
    void aNewerTombstoneIsRepairedToo() {
        var plan = ReadRepair.plan(List.of(answer("a", Record.value(5, new byte[] {1})), answer("b", Record.tombstone(6))));
        assertThat(plan.newest()).contains(Record.tombstone(6));
        assertThat(plan.stale()).containsExactly("a");
    }

    @Test
    void nobodyHoldingTheKeyNeedsNothing() {
        var plan = ReadRepair.plan(List.of(answer("a", null), answer("b", null)));
        assertThat(plan.newest()).isEmpty();
        assertThat(plan.needed()).isFalse();
    }
}
