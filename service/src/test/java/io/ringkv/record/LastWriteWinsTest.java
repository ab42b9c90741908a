package io.ringkv.record;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Optional;

import org.junit.jupiter.api.Test;


class LastWriteWinsTest {

    @Test
    void newerTimestampWins() {
        Record older = Record.value(10, "old".getBytes());
        Record newer = Record.value(11, "new".getBytes());
        assertThat(LastWriteWins.ORDER.compare(newer, older)).isPositive();
        assertThat(LastWriteWins.newest(List.of(Optional.of(newer), Optional.of(older)))).contains(newer);
    }

    @Test
    void aNewerTombstoneBeatsAnOlderValueAndAnOlderOneLoses() {
        Record value = Record.value(10, "v".getBytes());
        assertThat(LastWriteWins.newest(List.of(Optional.of(value), Optional.of(Record.tombstone(11)))))
                .contains(Record.tombstone(11));
        assertThat(LastWriteWins.newest(List.of(Optional.of(value), Optional.of(Record.tombstone(9)))))
                .contains(value);
    }

    @Test
    void absenceLosesToAnyRecord() {
        Record value = Record.value(1, new byte[0]);
        assertThat(LastWriteWins.newest(List.of(Optional.empty(), Optional.of(value), Optional.empty()))).contains(value);
        assertThat(LastWriteWins.newest(List.of(Optional.empty(), Optional.empty()))).isEmpty();
    }

    @Test
    void tiesBreakTheSameWayWhateverTheOrderOfAnswers() {
        Record a = Record.value(7, new byte[] {1, 2});
        Record b = Record.value(7, new byte[] {(byte) 0xff});
        Record tombstone = Record.tombstone(7);
        assertThat(LastWriteWins.newest(List.of(Optional.of(a), Optional.of(b)))).contains(b);
        assertThat(LastWriteWins.newest(List.of(Optional.of(b), Optional.of(a)))).contains(b);
        assertThat(LastWriteWins.newest(List.of(Optional.of(b), Optional.of(tombstone), Optional.of(a)))).contains(tombstone);
        assertThat(LastWriteWins.ORDER.compare(a, Record.value(7, new byte[] {1, 2}))).isZero();
    }

    @Test
    void anExpiredValueStillHidesOlderVersionsAndExpiryBreaksTheLastTie() {
        Record older = Record.value(10, "old".getBytes());
        Record expired = Record.expiring(11, "gone".getBytes(), 1);
        assertThat(LastWriteWins.newest(List.of(Optional.of(older), Optional.of(expired)))).contains(expired);

        byte[] same = {1};
        Record sooner = Record.expiring(7, same, 1_000);
        Record later = Record.expiring(7, same, 2_000);
        Record never = Record.value(7, same);
        for (List<Record> answers : List.of(List.of(sooner, later, never), List.of(never, later, sooner))) {
            assertThat(LastWriteWins.newest(answers.stream().map(Optional::of).toList())).contains(never);
        }
        assertThat(LastWriteWins.ORDER.compare(later, sooner)).isPositive();
        assertThat(LastWriteWins.ORDER.compare(sooner, Record.expiring(7, same, 1_000))).isZero();
    }
}
