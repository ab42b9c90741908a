package io.ringkv.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.CassandraCompactionFilter;
import org.rocksdb.FlushOptions;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;

import io.ringkv.record.Record;
import io.ringkv.record.RecordCodec.MalformedRecordException;

/**
 * The row an expiring record is stored as, and what RocksDB's own compaction filter makes of it:
 * the test that the library still does what {@link ExpiringRows} relies on.
 */
class ExpiringRowsTest {

    private static final byte[] VALUE = "session".getBytes(StandardCharsets.UTF_8);

    @TempDir
    Path dir;

    @Test
    void aRowHoldsItsRecordWholeAndAPlainRecordIsNotARow() {
        Record record = Record.expiring(42, VALUE, 1_700_000_000_123L);
        Record read = ExpiringRows.recordOf(ExpiringRows.of(record));
        assertThat(read).isEqualTo(record);
        assertThat(read.expiresAt()).isEqualTo(1_700_000_000_123L);
        assertThatThrownBy(() -> ExpiringRows.of(Record.value(1, VALUE))).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void compactionLeavesTheTombstoneOfAnExpiredRecordAndALiveOneAsItIs() throws Exception {
        long now = System.currentTimeMillis();
        Record expired = Record.expiring(7, VALUE, now - 1_000);
        Record live = Record.expiring(8, VALUE, now + 3_600_000);
        RocksDB.loadLibrary();
        try (CassandraCompactionFilter filter = new CassandraCompactionFilter(true, 0);
                Options options = new Options().setCreateIfMissing(true).setCompactionFilter(filter);
                RocksDB db = RocksDB.open(options, dir.toString());
                FlushOptions flush = new FlushOptions().setWaitForFlush(true)) {
            db.put(bytes("expired"), ExpiringRows.of(expired));
            db.put(bytes("live"), ExpiringRows.of(live));
            db.flush(flush);
            db.compactRange();

            byte[] residue = db.get(bytes("expired"));
            assertThat(residue.length).as("the value dropped").isLessThan(ExpiringRows.of(expired).length - VALUE.length);
            assertThat(ExpiringRows.recordOf(residue)).isEqualTo(Record.tombstone(7));
            assertThat(ExpiringRows.recordOf(db.get(bytes("live")))).isEqualTo(live);
        }
    }

    @Test
    void rejectsWhatItDidNotWrite() {
        byte[] row = ExpiringRows.of(Record.expiring(1, VALUE, 5));
        for (int cut : new int[] {0, 5, 12, 20, row.length - 1}) {
            assertThatThrownBy(() -> ExpiringRows.recordOf(Arrays.copyOf(row, cut))).as("cut to %d bytes", cut)
                    .isInstanceOf(MalformedRecordException.class);
        }
        byte[] deletedRow = row.clone();
        deletedRow[0] = 0;
        assertThatThrownBy(() -> ExpiringRows.recordOf(deletedRow)).hasMessageContaining("not live");
        byte[] hugeColumn = row.clone();
        java.nio.ByteBuffer.wrap(hugeColumn).putInt(12 + 2 + 8, Integer.MAX_VALUE);
        assertThatThrownBy(() -> ExpiringRows.recordOf(hugeColumn)).hasMessageContaining("column of");
        assertThatThrownBy(() -> ExpiringRows.recordOf(Record.value(1, VALUE).encoded())).isInstanceOf(MalformedRecordException.class);
    }

    private static byte[] bytes(String key) {
        return key.getBytes(StandardCharsets.UTF_8);
    }
}
