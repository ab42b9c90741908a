package io.ringkv.storage;

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
            assertThat(RecordCodec.decode(RecordCodec.encode(record))).isEqualTo(record);
        }
    }

    @Test
    void hasATenByteHeader() {
        assertThat(RecordCodec.encode(Record.value(1, new byte[] {42}))).hasSize(RecordCodec.HEADER_SIZE + 1);
        assertThat(RecordCodec.encode(Record.tombstone(1))).hasSize(RecordCodec.HEADER_SIZE);
    }

    @Test
    void rejectsWhatItDidNotWrite() {
        assertThatThrownBy(() -> RecordCodec.decode(new byte[3])).isInstanceOf(RecordCodec.MalformedRecordException.class);
        byte[] unknownVersion = RecordCodec.encode(Record.value(1, new byte[0]));
        unknownVersion[0] = 9;
        assertThatThrownBy(() -> RecordCodec.decode(unknownVersion)).hasMessageContaining("format");
        byte[] tombstoneWithValue = RecordCodec.encode(Record.value(1, new byte[] {1}));
        tombstoneWithValue[1] = 1;
        assertThatThrownBy(() -> RecordCodec.decode(tombstoneWithValue)).hasMessageContaining("tombstone");
    }
}
