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
        for (Record record : new Record[] {Record.value(Long.MAX_VALUE, allBytes), Record.value(0, new byte[0]),
                Record.tombstone(123456789L), Record.expiring(5, allBytes, 1_700_000_000_000L), Record.expiring(6, new byte[0], 1)}) {
            Record decoded = RecordCodec.decode(record.encoded().clone());
            assertThat(decoded).isEqualTo(record);
            assertThat(decoded.expiresAt()).isEqualTo(record.expiresAt());
            assertThat(decoded.value()).isEqualTo(record.value());
            assertThat(RecordCodec.decodeVersion(record.encoded(), record.encoded().length).timestamp()).isEqualTo(record.timestamp());
        }
    }

    @Test
    void aValueWithoutExpiryKeepsFormatOneAndAnExpiringOneTakesEightBytesMore() {
        byte[] value = {1, 2, 3};
        Record plain = Record.value(9, value);
        Record expiring = Record.expiring(9, value, 1_000);
        assertThat(plain.encoded()[0]).isEqualTo(RecordCodec.FORMAT_V1);
        assertThat(plain.expiresAt()).isEqualTo(Record.NEVER);
        assertThat(expiring.encoded()[0]).isEqualTo(RecordCodec.FORMAT_EXPIRING);
        assertThat(expiring.encoded()).hasSize(RecordCodec.MAX_HEADER_SIZE + value.length);
        assertThat(expiring.valueLength()).isEqualTo(3);
        assertThat(expiring.valueBuffer().get(2)).isEqualTo((byte) 3);
        assertThat(expiring.compareValues(plain)).isZero();
        // The flags and the timestamp, all a version is read from, sit where format 1 has them.
        assertThat(java.util.Arrays.copyOfRange(expiring.encoded(), RecordCodec.FLAGS_OFFSET, RecordCodec.HEADER_SIZE))
                .isEqualTo(java.util.Arrays.copyOfRange(plain.encoded(), RecordCodec.FLAGS_OFFSET, RecordCodec.HEADER_SIZE));
    }

    @Test
    void aValueIsLiveUntilItsExpiryAndATombstoneNever() {
        Record expiring = Record.expiring(1, new byte[] {1}, 1_000);
        assertThat(expiring.liveAt(999)).isTrue();
        assertThat(expiring.liveAt(1_000)).isFalse();
        assertThat(Record.value(1, new byte[0]).liveAt(Long.MAX_VALUE)).isTrue();
        assertThat(Record.tombstone(1).liveAt(0)).isFalse();
        assertThatThrownBy(() -> Record.expiring(1, new byte[0], 0)).isInstanceOf(IllegalArgumentException.class);
    }

    /** The coordinator's stamp decides the expiry: the timestamp's physical milliseconds plus the time to live. */
    @Test
    void aTimeToLiveCountsFromTheTimestampsPhysicalTime() {
        long timestamp = HybridClock.timestampAt(1_700_000_000_000L) + 7;
        Record expiring = Record.expiringAfter(timestamp, new byte[] {1}, java.time.Duration.ofSeconds(30));
        assertThat(expiring.expiresAt()).isEqualTo(1_700_000_030_000L);
        assertThat(expiring.timestamp()).isEqualTo(timestamp);
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
        byte[] unknownFlag = Record.value(1, new byte[0]).encoded().clone();
        unknownFlag[1] = 2;
        assertThatThrownBy(() -> RecordCodec.decode(unknownFlag)).hasMessageContaining("flags");

        byte[] expiring = Record.expiring(1, new byte[] {1}, 5).encoded();
        assertThatThrownBy(() -> RecordCodec.decode(java.util.Arrays.copyOf(expiring, RecordCodec.MAX_HEADER_SIZE - 1)))
                .hasMessageContaining("shorter than its header");
        byte[] expiringTombstone = expiring.clone();
        expiringTombstone[1] = 1;
        assertThatThrownBy(() -> RecordCodec.decode(expiringTombstone)).hasMessageContaining("expiring tombstone");
        byte[] notPositive = expiring.clone();
        java.nio.ByteBuffer.wrap(notPositive).putLong(RecordCodec.EXPIRY_OFFSET, -5);
        assertThatThrownBy(() -> RecordCodec.decode(notPositive)).hasMessageContaining("not positive");
    }
}
