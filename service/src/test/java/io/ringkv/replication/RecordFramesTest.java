package io.ringkv.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.ringkv.storage.KeyedRecord;
import io.ringkv.storage.Record;

class RecordFramesTest {

    private final List<KeyedRecord> records = List.of(
            new KeyedRecord("a".getBytes(), Record.value(1, "one".getBytes())),
            new KeyedRecord("b".getBytes(), Record.tombstone(2)),
            new KeyedRecord("c".getBytes(), Record.value(3, new byte[0])));

    @Test
    void decodesAStreamCutAtEveryPossiblePoint() {
        ByteArrayOutputStream stream = new ByteArrayOutputStream();
        records.forEach(record -> stream.writeBytes(RecordFrames.encode(record)));
        byte[] bytes = stream.toByteArray();
        for (int cut = 0; cut <= bytes.length; cut++) {
            RecordFrames.Decoder decoder = new RecordFrames.Decoder(1024, 1024);
            List<KeyedRecord> decoded = new ArrayList<>(decoder.feed(Arrays.copyOfRange(bytes, 0, cut)));
            decoded.addAll(decoder.feed(Arrays.copyOfRange(bytes, cut, bytes.length)));
            assertThat(decoded).usingRecursiveFieldByFieldElementComparator().isEqualTo(records);
            assertThat(decoder.isAtFrameBoundary()).isTrue();
        }
    }

    @Test
    void decodesByteByByte() {
        RecordFrames.Decoder decoder = new RecordFrames.Decoder(1024, 1024);
        List<KeyedRecord> decoded = new ArrayList<>();
        for (KeyedRecord record : records) {
            for (byte b : RecordFrames.encode(record)) {
                decoded.addAll(decoder.feed(new byte[] {b}));
            }
        }
        assertThat(decoded).hasSize(3);
    }

    @Test
    void noticesATruncatedStream() {
        RecordFrames.Decoder decoder = new RecordFrames.Decoder(1024, 1024);
        byte[] frame = RecordFrames.encode(records.get(0));
        assertThat(decoder.feed(Arrays.copyOf(frame, frame.length - 1))).isEmpty();
        assertThat(decoder.isAtFrameBoundary()).isFalse();
    }

    @Test
    void refusesFramesLargerThanTheLimitsBeforeAllocating() {
        RecordFrames.Decoder decoder = new RecordFrames.Decoder(1024, 1024);
        byte[] huge = ByteBuffer.allocate(8).putInt(1).putInt(Integer.MAX_VALUE).array();
        assertThatThrownBy(() -> decoder.feed(huge)).hasMessageContaining("corrupt");
    }
}
