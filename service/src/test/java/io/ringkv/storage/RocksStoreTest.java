package io.ringkv.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.ringkv.replication.LastWriteWins;

class RocksStoreTest {

    @TempDir
    Path dir;

    private RocksStore store;

    private RocksStore open(Duration grace) {
        store = RocksStore.open(new StorageSettings(dir, grace, 8 * 1024 * 1024, false), LastWriteWins.ORDER);
        return store;
    }

    @AfterEach
    void close() {
        if (store != null) {
            store.close();
        }
    }

    private static byte[] b(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void keepsOnlyTheNewestVersion() {
        open(Duration.ofHours(24));
        assertThat(store.apply(b("k"), Record.value(10, b("ten")))).isTrue();
        assertThat(store.apply(b("k"), Record.value(5, b("five")))).as("an older write is ignored").isFalse();
        assertThat(store.get(b("k"))).contains(Record.value(10, b("ten")));
        assertThat(store.apply(b("k"), Record.tombstone(11))).isTrue();
        assertThat(store.get(b("k"))).contains(Record.tombstone(11));
        assertThat(store.apply(b("k"), Record.value(10, b("ten")))).as("a delete is not undone by an older write").isFalse();
        assertThat(store.apply(b("k"), Record.value(12, b("again")))).isTrue();
        assertThat(store.get(b("k"))).contains(Record.value(12, b("again")));
        assertThat(store.get(b("absent"))).isEmpty();
    }

    @Test
    void scansLiveRecordsAndTombstonesInUnsignedKeyOrder() {
        open(Duration.ofHours(24));
        store.apply(b("b"), Record.value(1, b("B")));
        store.apply(b("a"), Record.tombstone(2));
        store.apply(new byte[] {(byte) 0xC3, (byte) 0xA9}, Record.value(3, b("e-acute")));
        store.apply(b("c"), Record.value(4, b("C")));
        store.apply(b("d"), Record.tombstone(5));

        assertThat(keys(null, null)).containsExactly("a", "b", "c", "d", "\u00e9");
        assertThat(keys("b", "d")).containsExactly("b", "c");
        assertThat(keys("bb", "bc")).isEmpty();
        assertThat(keys("c", null)).containsExactly("c", "d", "\u00e9");
    }

    private List<String> keys(String start, String end) {
        List<String> keys = new ArrayList<>();
        try (RocksStore.RangeCursor cursor = store.openRange(start == null ? new byte[0] : b(start), end == null ? null : b(end))) {
            for (KeyedRecord next = cursor.next(); next != null; next = cursor.next()) {
                keys.add(new String(next.key(), StandardCharsets.UTF_8));
            }
        }
        return keys;
    }

    @Test
    void aRangeSeesOneSnapshot() {
        open(Duration.ofHours(24));
        store.apply(b("a"), Record.value(1, b("A")));
        store.apply(b("b"), Record.value(1, b("B")));
        try (RocksStore.RangeCursor cursor = store.openRange(b("a"), null)) {
            store.apply(b("b"), Record.tombstone(2));
            store.apply(b("c"), Record.value(2, b("C")));
            assertThat(cursor.next().record()).isEqualTo(Record.value(1, b("A")));
            assertThat(cursor.next().record()).isEqualTo(Record.value(1, b("B")));
            assertThat(cursor.next()).isNull();
        }
    }

    @Test
    void survivesAReopen() {
        open(Duration.ofHours(24));
        for (int i = 0; i < 1000; i++) {
            store.apply(b("key" + i), i % 10 == 0 ? Record.tombstone(i) : Record.value(i, b("value" + i)));
        }
        store.close();
        open(Duration.ofHours(24));
        for (int i = 0; i < 1000; i++) {
            assertThat(store.get(b("key" + i))).contains(i % 10 == 0 ? Record.tombstone(i) : Record.value(i, b("value" + i)));
        }
    }

    @Test
    void compactionDropsTombstonesOnlyAfterTheGracePeriod() throws InterruptedException {
        open(Duration.ofSeconds(2));
        store.apply(b("deleted"), Record.tombstone(1));
        store.apply(b("kept"), Record.value(1, b("v")));
        store.compact();
        assertThat(store.get(b("deleted"))).as("within the grace period").contains(Record.tombstone(1));

        Thread.sleep(3_100);
        store.compact();
        assertThat(store.get(b("deleted"))).as("after the grace period").isEmpty();
        assertThat(store.get(b("kept"))).as("live values never expire").contains(Record.value(1, b("v")));
    }

    @Test
    void closingWithAnOpenCursorReleasesItAndRefusesFurtherCalls() {
        open(Duration.ofHours(24));
        store.apply(b("a"), Record.value(1, b("A")));
        RocksStore.RangeCursor cursor = store.openRange(b("a"), null);
        store.close();
        assertThatThrownBy(cursor::next).isInstanceOf(StorageException.class);
        assertThatThrownBy(() -> store.get(b("a"))).isInstanceOf(StorageException.class);
        cursor.close();
        assertThat(store.isOpen()).isFalse();
    }

    @Test
    void refusesASecondOpenOfTheSameDirectory() {
        open(Duration.ofHours(24));
        assertThatThrownBy(() -> RocksStore.open(new StorageSettings(dir, Duration.ofHours(1), 1024 * 1024, false), LastWriteWins.ORDER))
                .isInstanceOf(StorageException.class)
                .hasMessageContaining(dir.toString());
    }
}
