package io.ringkv.record;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

/**
 * The e2e checker reads records off the wire in Python (e2e/checker/wire.py), with its own copy of
 * the layout: this keeps that copy equal to {@link RecordCodec}'s, so that the two cannot drift.
 */
class RecordLayoutTest {

    private static final Path CHECKER_WIRE = Path.of("../e2e/checker/wire.py");
    private static final Pattern CONSTANT = Pattern.compile("(?m)^RECORD_(\\w+) = (\\d+)$");

    @Test
    void theCheckersLayoutIsTheCodecs() throws IOException {
        Map<String, Integer> checker = checkerLayout();
        assertThat(checker).isEqualTo(new TreeMap<>(Map.of(
                "FORMAT", (int) RecordCodec.FORMAT_V1,
                "FORMAT_AT", RecordCodec.FORMAT_OFFSET,
                "FLAGS_AT", RecordCodec.FLAGS_OFFSET,
                "TIMESTAMP_AT", RecordCodec.TIMESTAMP_OFFSET,
                "HEADER", RecordCodec.HEADER_SIZE,
                "TOMBSTONE_FLAG", (int) RecordCodec.FLAG_TOMBSTONE)));
    }

    @Test
    void theCheckerReadsWhatTheCodecWrites() throws IOException {
        Map<String, Integer> layout = checkerLayout();
        long timestamp = 0x0102030405060708L;
        for (Record record : new Record[] {Record.tombstone(timestamp), Record.value(timestamp, new byte[] {42})}) {
            ByteBuffer encoded = ByteBuffer.wrap(record.encoded());
            assertThat(encoded.get(layout.get("FORMAT_AT"))).isEqualTo(layout.get("FORMAT").byteValue());
            assertThat((encoded.get(layout.get("FLAGS_AT")) & layout.get("TOMBSTONE_FLAG")) != 0).isEqualTo(record.tombstone());
            assertThat(encoded.getLong(layout.get("TIMESTAMP_AT"))).isEqualTo(timestamp);
            assertThat(encoded.capacity() - layout.get("HEADER")).isEqualTo(record.valueLength());
        }
    }

    private static Map<String, Integer> checkerLayout() throws IOException {
        Map<String, Integer> layout = new TreeMap<>();
        Matcher constant = CONSTANT.matcher(Files.readString(CHECKER_WIRE));
        while (constant.find()) {
            layout.put(constant.group(1), Integer.parseInt(constant.group(2)));
        }
        return layout;
    }
}
