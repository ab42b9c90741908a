package io.ringkv.replication;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import io.ringkv.storage.KeyedRecord;
import io.ringkv.storage.RecordCodec;

/**
 * The framing of a replica's range stream on the internal protocol: raw bytes, no JSON, no base64.
 *
 * <pre>
 *   int32  key length     int32  record length     key bytes     record ({@link RecordCodec})
 * </pre>
 *
 * A {@link Decoder} takes the stream in whatever pieces the network delivers and yields whole
 * records; lengths are checked against limits first, so garbage cannot make it allocate gigabytes.
 */
public final class RecordFrames {

    static final int FRAME_HEADER = 8;

    private RecordFrames() {
    }

    public static byte[] encode(KeyedRecord keyed) {
        byte[] record = RecordCodec.encode(keyed.record());
        return ByteBuffer.allocate(FRAME_HEADER + keyed.key().length + record.length)
                .putInt(keyed.key().length)
                .putInt(record.length)
                .put(keyed.key())
                .put(record)
                .array();
    }

    /** Reassembles frames from pieces of a stream. Not thread-safe: one per stream. */
    public static final class Decoder {

        private final int maxKeyLength;
        private final int maxRecordLength;
        private byte[] pending = new byte[0];
        private int pendingLength;

        public Decoder(int maxKeyLength, int maxRecordLength) {
            this.maxKeyLength = maxKeyLength;
            this.maxRecordLength = maxRecordLength;
        }

        /** Adds the next piece of the stream and returns the records it completed. */
        public List<KeyedRecord> feed(byte[] piece) {
            append(piece);
            List<KeyedRecord> complete = new ArrayList<>();
            int offset = 0;
            while (pendingLength - offset >= FRAME_HEADER) {
                ByteBuffer header = ByteBuffer.wrap(pending, offset, FRAME_HEADER);
                int keyLength = header.getInt();
                int recordLength = header.getInt();
                if (keyLength < 0 || keyLength > maxKeyLength || recordLength < 0 || recordLength > maxRecordLength) {
                    throw new IllegalStateException(
                            "corrupt range stream: frame of key " + keyLength + " and record " + recordLength + " bytes");
                }
                int frameLength = FRAME_HEADER + keyLength + recordLength;
                if (pendingLength - offset < frameLength) {
                    break;
                }
                int keyStart = offset + FRAME_HEADER;
                byte[] key = Arrays.copyOfRange(pending, keyStart, keyStart + keyLength);
                byte[] record = Arrays.copyOfRange(pending, keyStart + keyLength, offset + frameLength);
                complete.add(new KeyedRecord(key, RecordCodec.decode(record)));
                offset += frameLength;
            }
            System.arraycopy(pending, offset, pending, 0, pendingLength - offset);
            pendingLength -= offset;
            return complete;
        }

        /** Whether the stream ended between frames, as a complete stream does. */
        public boolean isAtFrameBoundary() {
            return pendingLength == 0;
        }

        private void append(byte[] piece) {
            if (pendingLength + piece.length > pending.length) {
                pending = Arrays.copyOf(pending, Math.max(pendingLength + piece.length, pending.length * 2));
            }
            System.arraycopy(piece, 0, pending, pendingLength, piece.length);
            pendingLength += piece.length;
        }
    }
}
