package io.ringkv.peer.wire;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.ringkv.record.KeyedRecord;
import io.ringkv.record.Record;
import io.ringkv.record.RecordBatch;
import io.ringkv.record.RecordCodec;

/**
 * The frames of the node-to-node protocol, and the field layouts its messages share (keys,
 * records, batches of records, pairs of longs, errors). Each message's own type byte and layout
 * are in its unit in {@code io.ringkv.peer.message}. Pure: it only reads and writes buffers, so
 * every layout is tested directly.
 *
 * <pre>
 *   int32 length      of everything after it: 5 + the payload
 *   byte  type        a handshake or shared answer below, or a message's (its unit's TYPE)
 *   int32 id          the request (or range stream) the frame belongs to; 0 in the handshake
 *   ...   payload     laid out per type
 * </pre>
 *
 * Many requests share a connection: every answer carries its request's id, so answers may come in
 * any order and requests need not wait for earlier ones (multiplexed and pipelined). Keys are
 * {@code uint16 length + bytes}; records are in their storage encoding ({@link RecordCodec}), so
 * a replica stores what it receives without re-encoding it. A type this side does not know is
 * answered with {@link #ERROR} {@link ErrorCode#UNKNOWN_MESSAGE}, so that a newer peer can add
 * message types (repair, hints, data movement) and learn that an older one lacks them.
 */
public final class Wire {

    /**
     * The protocol version this node speaks; the handshake settles on the lower of both sides'.
     * Version 2 added WRITE_BATCH and READ_BATCH.
     */
    public static final int VERSION = 2;

    /**
     * Range streams (SCAN, TOKEN_SCAN) open at once on one connection. The server refuses more:
     * each holds a RocksDB iterator, and the memory it pins, until it ends. The client opens no
     * more than this on a connection and holds the rest back until one ends, so that many
     * client ranges at once are slow, never refused.
     */
    public static final int MAX_STREAMS_PER_CONNECTION = 16;

    /** Bytes before the payload: length, type and id. */
    public static final int HEADER = 9;
    public static final int LENGTH_FIELD = 4;

    /** Room in a frame for what a Paxos message carries besides its key and records: ballots, recent commits. */
    public static final int PAXOS_OVERHEAD = 1024;

    /**
     * The largest frame a peer may send, length field included: a full batch, or the largest of a
     * key's messages, a Paxos promise (the record held and a proposal's, each of the largest size).
     * Every frame type above fits.
     */
    public static int maxFrame(int maxKeyLength, int maxRecordLength) {
        return HEADER + 2 + Math.max(RecordBatch.MAX_BYTES, 2 + maxKeyLength + PAXOS_OVERHEAD + 2 * (4 + maxRecordLength));
    }

    // The handshake (id 0), see Handshake.
    public static final byte HELLO = 0x01;
    public static final byte AUTH = 0x02;
    public static final byte WELCOME = 0x03;
    public static final byte REFUSED = 0x04;

    // Requests (0x10..0x1F) are the units of io.ringkv.peer.message, each with its type byte.

    // Answers, from the replica, that several requests share; those of one request are in its unit.
    public static final byte DONE = 0x22;
    /** error code (uint16), message (UTF-8, the rest of the frame). */
    public static final byte ERROR = 0x23;
    /** Records of a range stream, in key order: repeated key, int32 record length, record. */
    public static final byte BATCH = 0x24;
    /** The range stream with this id is complete. */
    public static final byte END = 0x25;

    /** Why a request failed; the caller tells a sick peer (counted by its breaker) from its own mistake. */
    public enum ErrorCode {
        /** The peer is over its bound of requests in progress, or its storage queue is full. */
        OVERLOADED(1, true),
        /** The request was malformed: this node's mistake, not a sick peer. */
        BAD_REQUEST(2, false),
        /** The peer's store failed or is closing. */
        STORAGE(3, true),
        /** The peer does not know the message type: it speaks an older protocol. */
        UNKNOWN_MESSAGE(4, false),
        /** Anything else that went wrong on the peer. */
        INTERNAL(5, true);

        private final int code;
        private final boolean peerFailure;

        ErrorCode(int code, boolean peerFailure) {
            this.code = code;
            this.peerFailure = peerFailure;
        }

        public int code() {
            return code;
        }

        /** Whether it says the peer is unwell (and its breaker should count it), rather than the request. */
        public boolean peerFailure() {
            return peerFailure;
        }

        public static ErrorCode of(int code) {
            for (ErrorCode candidate : values()) {
                if (candidate.code == code) {
                    return candidate;
                }
            }
            return INTERNAL;
        }
    }

    private Wire() {
    }

    /** A frame with room for the payload; the caller writes the payload and then {@link #seal}s it. */
    public static ByteBuf begin(ByteBufAllocator allocator, byte type, int id, int payloadHint) {
        ByteBuf frame = allocator.buffer(HEADER + payloadHint);
        frame.writeInt(0);
        frame.writeByte(type);
        frame.writeInt(id);
        return frame;
    }

    /** Writes the length field once the payload is complete. */
    public static ByteBuf seal(ByteBuf frame) {
        frame.setInt(frame.readerIndex(), frame.readableBytes() - LENGTH_FIELD);
        return frame;
    }

    public static ByteBuf empty(ByteBufAllocator allocator, byte type, int id) {
        return seal(begin(allocator, type, id, 0));
    }

    /** Pairs of longs: the token intervals of a DIGEST or RECORD_SCAN request (low, high, ...), or a DIGESTS answer (hash, keys, ...). */
    public static long[] readPairs(ByteBuf payload) {
        int count = payload.readUnsignedShort();
        if (payload.readableBytes() != 16 * count) {
            throw new MalformedFrameException(count + " pairs of longs in " + payload.readableBytes() + " bytes");
        }
        long[] intervals = new long[2 * count];
        for (int i = 0; i < intervals.length; i++) {
            intervals[i] = payload.readLong();
        }
        return intervals;
    }

    /** Writes pairs of longs as {@link #readPairs} reads them: their count (2 bytes), then the longs. */
    public static ByteBuf writePairs(ByteBuf frame, long[] values) {
        frame.writeShort(values.length / 2);
        for (long value : values) {
            frame.writeLong(value);
        }
        return frame;
    }

    public static ByteBuf error(ByteBufAllocator allocator, int id, ErrorCode code, String message) {
        byte[] text = message.getBytes(StandardCharsets.UTF_8);
        ByteBuf frame = begin(allocator, ERROR, id, 2 + text.length);
        frame.writeShort(code.code());
        frame.writeBytes(text);
        return seal(frame);
    }

    /** A BATCH frame to fill with {@link #addToBatch}; sealed with {@link #seal}. */
    public static ByteBuf batch(ByteBufAllocator allocator, int id, int sizeHint) {
        return begin(allocator, BATCH, id, sizeHint);
    }

    /** Appends one record to a BATCH frame; returns the bytes it took, which is what credit counts. */
    public static int addToBatch(ByteBuf batch, KeyedRecord keyed) {
        int before = batch.writerIndex();
        byte[] encoded = keyed.record().encoded();
        writeKey(batch, keyed.key());
        batch.writeInt(encoded.length);
        batch.writeBytes(encoded);
        return batch.writerIndex() - before;
    }

    /** The records of the rest of the payload, in the BATCH layout: a WRITE_BATCH, or a RECORDS answer after its count. */
    public static List<KeyedRecord> readRecords(ByteBuf payload, int maxKeyLength, int maxRecordLength) {
        return readBatch(payload, maxKeyLength, maxRecordLength).stream().map(Sized::keyed).toList();
    }

    /** The records of a BATCH frame's payload, each with the bytes it took. */
    public static List<Sized> readBatch(ByteBuf payload, int maxKeyLength, int maxRecordLength) {
        List<Sized> records = new ArrayList<>();
        while (payload.isReadable()) {
            int before = payload.readerIndex();
            byte[] key = readKey(payload, maxKeyLength);
            int length = payload.readInt();
            if (length < RecordCodec.HEADER_SIZE || length > maxRecordLength || length > payload.readableBytes()) {
                throw new MalformedFrameException("a range record of " + length + " bytes");
            }
            Record record = decode(payload, length);
            records.add(new Sized(new KeyedRecord(key, record), payload.readerIndex() - before));
        }
        return records;
    }

    /** A record of a range stream and the bytes it took on the wire. */
    public record Sized(KeyedRecord keyed, int bytes) {
    }

    public static void writeKey(ByteBuf frame, byte[] key) {
        frame.writeShort(key.length);
        frame.writeBytes(key);
    }

    public static byte[] readKey(ByteBuf payload, int maxKeyLength) {
        if (payload.readableBytes() < 2) {
            throw new MalformedFrameException("a key without its length");
        }
        int length = payload.readUnsignedShort();
        if (length > maxKeyLength || length > payload.readableBytes()) {
            throw new MalformedFrameException("a key of " + length + " bytes (at most " + maxKeyLength + ")");
        }
        byte[] key = new byte[length];
        payload.readBytes(key);
        return key;
    }

    /** The rest of the payload as a record. */
    public static Record readRecord(ByteBuf payload, int maxRecordLength) {
        int length = payload.readableBytes();
        if (length > maxRecordLength) {
            throw new MalformedFrameException("a record of " + length + " bytes (at most " + maxRecordLength + ")");
        }
        return decode(payload, length);
    }

    private static Record decode(ByteBuf payload, int length) {
        byte[] encoded = new byte[length];
        payload.readBytes(encoded);
        try {
            return RecordCodec.decode(encoded);
        } catch (RecordCodec.MalformedRecordException e) {
            throw new MalformedFrameException(e.getMessage());
        }
    }

    public static String readText(ByteBuf payload) {
        return payload.readCharSequence(payload.readableBytes(), StandardCharsets.UTF_8).toString();
    }

    /** A frame that does not follow the layout of its type. */
    public static final class MalformedFrameException extends IllegalArgumentException {
        public MalformedFrameException(String message) {
            super(message);
        }
    }
}
