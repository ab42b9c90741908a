package io.ringkv.repair;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

import org.junit.jupiter.api.Test;

import io.ringkv.record.KeyedRecord;
import io.ringkv.record.Record;
import io.ringkv.record.RecordBatch;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** How a transfer asks its source for the keys' records, a batch at a time, until every key is covered. */
class RangeSyncBatchesTest {

    private static final Duration WAIT = Duration.ofSeconds(5);

    private static List<byte[]> keys(int count) {
        List<byte[]> keys = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            keys.add(("k" + i).getBytes(StandardCharsets.UTF_8));
        }
        return keys;
    }

    /** A source whose answers cover at most {@code covers} keys, every second key found. */
    private static Function<List<byte[]>, Mono<RecordBatch>> source(int covers, List<Integer> asked) {
        return keys -> {
            asked.add(keys.size());
            int covered = Math.min(covers, keys.size());
            List<KeyedRecord> found = new ArrayList<>();
            for (int i = 0; i < covered; i += 2) {
                found.add(new KeyedRecord(keys.get(i), Record.value(1, new byte[0])));
            }
            return Mono.just(new RecordBatch(covered, found));
        };
    }

    @Test
    void asksAgainFromTheFirstKeyNotCoveredUntilAllAre() {
        List<Integer> asked = new ArrayList<>();
        List<byte[]> keys = keys(2500);
        List<RecordBatch> batches = RangeSync.batches(source(700, asked), keys).collectList().block(WAIT);

        assertThat(asked).as("at most a batch's keys per ask, from where the last answer stopped")
                .containsExactly(RecordBatch.MAX_KEYS, RecordBatch.MAX_KEYS, RecordBatch.MAX_KEYS, 400);
        assertThat(batches).extracting(RecordBatch::covered).as("covered counts from the first key")
                .containsExactly(700, 1400, 2100, 2500);
        List<String> found = batches.stream().flatMap(batch -> batch.found().stream())
                .map(keyed -> new String(keyed.key(), StandardCharsets.UTF_8)).toList();
        assertThat(found).hasSize(1250).doesNotHaveDuplicates();
        assertThat(found.get(350)).isEqualTo("k700");
    }

    @Test
    void noKeysAskNothing() {
        List<Integer> asked = new ArrayList<>();
        assertThat(RangeSync.batches(source(10, asked), List.of()).collectList().block(WAIT)).isEmpty();
        assertThat(asked).isEmpty();
    }

    @Test
    void anAnswerThatCoversNoKeyFailsRatherThanAskingForever() {
        assertThatThrownBy(() -> RangeSync.batches(keys -> Mono.just(new RecordBatch(0, List.of())), keys(3)).blockLast(WAIT))
                .hasMessageContaining("covering 0 of 3 keys");
    }
    /**
     * A pulled stream is cut into batches of at most a RecordBatch's bytes and keys, in order,
     * nothing lost; a record larger than a batch goes alone.
     */
    @Test
    void aStreamIsCutIntoBatchesWithinTheBoundsInOrder() {
        List<KeyedRecord> records = new ArrayList<>();
        for (int i = 0; i < 3000; i++) {
            int size = i == 1500 ? RecordBatch.MAX_BYTES + 1 : i < 1000 ? 10 : 900;
            records.add(new KeyedRecord(("r" + i).getBytes(StandardCharsets.UTF_8), Record.value(i + 1, new byte[size])));
        }
        List<List<KeyedRecord>> batches = RangeSync.inBatches(Flux.fromIterable(records))
                .collectList().block(WAIT);
        assertThat(batches.stream().flatMap(List::stream).toList()).as("every record, in order").containsExactlyElementsOf(records);
        for (List<KeyedRecord> batch : batches) {
            assertThat(batch).hasSizeBetween(1, RecordBatch.MAX_KEYS);
            if (batch.size() > 1) {
                assertThat(RecordBatch.entrySizes(batch)).isLessThanOrEqualTo(RecordBatch.MAX_BYTES);
            }
        }
        assertThat(batches.getFirst()).as("small records: the key bound first").hasSize(RecordBatch.MAX_KEYS);
        assertThat(batches).filteredOn(batch -> batch.contains(records.get(1500))).singleElement()
                .satisfies(batch -> assertThat(batch).hasSize(1));
        assertThat(batches.size()).as("batches as full as the bounds allow").isLessThan(20);
    }
}
