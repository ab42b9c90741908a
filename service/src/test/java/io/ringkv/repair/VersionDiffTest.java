package io.ringkv.repair;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.ringkv.record.KeyedRecord;
import io.ringkv.record.Record;


class VersionDiffTest {

    private static byte[] key(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    /** Records in the token index's order, as a token scan returns them. */
    private static List<KeyedRecord> scan(KeyedRecord... records) {
        List<KeyedRecord> sorted = new ArrayList<>(List.of(records));
        sorted.sort((a, b) -> VersionDiff.compare(a.key(), b.key()));
        return sorted;
    }

    private static KeyedRecord at(String key, long timestamp) {
        return new KeyedRecord(key(key), Record.value(timestamp, new byte[0]));
    }

    private static List<String> text(List<byte[]> keys) {
        return keys.stream().map(k -> new String(k, StandardCharsets.UTF_8)).sorted().toList();
    }

    @Test
    void equalReplicasExchangeNothing() {
        var diff = VersionDiff.of(scan(at("a", 1), at("b", 2)), scan(at("a", 1), at("b", 2)));
        assertThat(diff.size()).isZero();
    }

    @Test
    void eachSideGetsWhatItLacksOrHoldsOlder() {
        var local = scan(at("a", 1), at("b", 5), at("c", 3), at("only-here", 1));
        var remote = scan(at("a", 1), at("b", 4), at("c", 7), at("only-there", 1));
        var diff = VersionDiff.of(local, remote);
        assertThat(text(diff.push())).containsExactly("b", "only-here");
        assertThat(text(diff.pull())).containsExactly("c", "only-there");
    }

    @Test
    void aNewerTombstoneWins() {
        var diff = VersionDiff.of(scan(at("a", 1)), scan(new KeyedRecord(key("a"), Record.tombstone(2))));
        assertThat(text(diff.pull())).containsExactly("a");
        assertThat(diff.push()).isEmpty();
    }

    @Test
    void oneEmptySideTakesEverything() {
        var many = new ArrayList<KeyedRecord>();
        for (int i = 0; i < 100; i++) {
            many.add(at("k" + i, i));
        }
        many.sort((a, b) -> VersionDiff.compare(a.key(), b.key()));
        assertThat(VersionDiff.of(many, List.of()).push()).hasSize(100);
        assertThat(VersionDiff.of(List.of(), many).pull()).hasSize(100);
    }
}
