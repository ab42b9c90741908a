package io.ringkv.record;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.Test;

class RecordBatchTest {

    private final Map<String, Record> stored = new HashMap<>();
    private final List<String> reads = new ArrayList<>();

    private Optional<Record> read(byte[] key) {
        String name = new String(key, StandardCharsets.UTF_8);
        reads.add(name);
        return Optional.ofNullable(stored.get(name));
    }

    private static List<byte[]> keys(String... names) {
        return java.util.Arrays.stream(names).map(name -> name.getBytes(StandardCharsets.UTF_8)).toList();
    }

    private static List<String> names(RecordBatch batch) {
        return batch.found().stream().map(keyed -> new String(keyed.key(), StandardCharsets.UTF_8)).toList();
    }

    @Test
    void smallRecordsAllFitAndAbsentKeysAreCoveredWithoutARecord() {
        stored.put("a", Record.value(1, new byte[10]));
        stored.put("c", Record.tombstone(2));
        RecordBatch batch = RecordBatch.read(keys("a", "b", "c"), this::read);
        assertThat(batch.covered()).isEqualTo(3);
        assertThat(names(batch)).containsExactly("a", "c");
        assertThat(batch.valueBytes()).isEqualTo(10);
    }

    @Test
    void stopsBeforeTheRecordThatWouldPassTheBoundAndCoversOnlyWhatItRead() {
        int value = 100 * 1024;
        for (String name : List.of("a", "b", "c", "d")) {
            stored.put(name, Record.value(1, new byte[value]));
        }
        RecordBatch batch = RecordBatch.read(keys("a", "missing", "b", "c", "d"), this::read);
        assertThat(names(batch)).as("two of 100 KiB fit 256 KiB, three do not").containsExactly("a", "b");
        assertThat(batch.covered()).as("a, missing and b; c is asked again").isEqualTo(3);
        assertThat(reads).as("nothing read past the record that did not fit").containsExactly("a", "missing", "b", "c");
    }

    @Test
    void aRecordLargerThanTheBoundGoesAloneRatherThanNever() {
        stored.put("huge", Record.value(1, new byte[RecordBatch.MAX_BYTES + 1]));
        stored.put("next", Record.value(1, new byte[1]));
        RecordBatch batch = RecordBatch.read(keys("huge", "next"), this::read);
        assertThat(names(batch)).containsExactly("huge");
        assertThat(batch.covered()).isEqualTo(1);
    }

    @Test
    void theEntrySizeIsWhatTheRecordTakesOnTheWire() {
        KeyedRecord keyed = new KeyedRecord(new byte[7], Record.value(1, new byte[100]));
        assertThat(RecordBatch.entrySize(keyed)).isEqualTo(2 + 7 + 4 + keyed.record().encoded().length);
    }
}
