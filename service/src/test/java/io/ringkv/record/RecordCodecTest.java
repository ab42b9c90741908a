package io.ringkv.record;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class RecordCodecTest {

    @Test
    void roundTripsValuesOfAnyBytesAndTombstones() {
        byte[] allBytes = new byte[256];
        for (int i = 0; i < allBytes.length; i++) {
            allBytes[i] = (byte) i;
        }
        for (Record record : new Record[] {
                Record.value(Long.MAX_VALUE, allBytes), Record.value(0, new byte[0]), Record.tombstone(123456789L)}) {
            assertThat(RecordCodec.decode(record.encoded().clone())).isEqualTo(record);
        }
    }

    @Test
    void hasATenByteHeader() {
        assertThat(Record.value(1, new byte[] {42}).encoded()).hasSize(RecordCodec.HEADER_SIZE + 1);
        assertThat(Record.tombstone(1).encoded()).hasSize(RecordCodec.HEADER_SIZE);
    }

    @Test
    void aDecodedRecordIsTheBytesItWasReadFromWithoutACopy() {
        byte[] stored = Record.value(7, new byte[] {1, 2, 3}).encoded().clone();
        Record record = RecordCodec.decode(stored);
        assertThat(record.encoded()).isSameAs(stored);
        assertThat(record.timestamp()).isEqualTo(7);
        assertThat(record.value()).containsExactly(1, 2, 3);
        assertThat(record.valueLength()).isEqualTo(3);
    }

    @Test
    void theValueIsLentReadOnlyAndComparedInPlace() {
        Record record = Record.value(1, new byte[] {5, 6});
        assertThat(record.valueBuffer().isReadOnly()).isTrue();
        assertThat(record.valueBuffer().remaining()).isEqualTo(2);
        assertThat(record.valueBuffer().get(1)).isEqualTo((byte) 6);
        // Unsigned: 0xff sorts after 0x01, and a longer value after its own prefix.
        assertThat(Record.value(1, new byte[] {(byte) 0xff}).compareValues(Record.value(2, new byte[] {1}))).isPositive();
        assertThat(Record.value(1, new byte[] {1}).compareValues(Record.value(1, new byte[] {1, 0}))).isNegative();
        assertThat(Record.tombstone(3).compareValues(Record.tombstone(4))).isZero();
    }

    @Test
    void rejectsWhatItDidNotWrite() {
        assertThatThrownBy(() -> RecordCodec.decode(new byte[3])).isInstanceOf(RecordCodec.MalformedRecordException.class);
        byte[] unknownVersion = Record.value(1, new byte[0]).encoded().clone();
        unknownVersion[0] = 9;
        assertThatThrownBy(() -> RecordCodec.decode(unknownVersion)).hasMessageContaining("format");
        byte[] tombstoneWithValue = Record.value(1, new byte[] {1}).encoded().clone();
        tombstoneWithValue[1] = 1;
        assertThatThrownBy(() -> RecordCodec.decode(tombstoneWithValue)).hasMessageContaining("tombstone");
    }
}
