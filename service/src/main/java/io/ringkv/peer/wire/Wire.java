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
 * The frames of the node-to-node protocol, and how each message is laid out in one. Pure: it
 * only reads and writes buffers, so every layout is tested directly.
 *
 * <pre>
 *   int32 length      of everything after it: 5 + the payload
 *   byte  type        one of the constants below
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
     * Version 2 added {@link #WRITE_BATCH} and {@link #READ_BATCH}.
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

    /**
     * The largest frame a peer may send, length field included: one record of the largest size in
     * any message, or a full batch. Every frame type above fits.
     */
    public static int maxFrame(int maxKeyLength, int maxRecordLength) {
        return HEADER + 2 + Math.max(RecordBatch.MAX_BYTES, 2 + maxKeyLength + 4 + maxRecordLength);
    }

    // The handshake (id 0), see Handshake.
    public static final byte HELLO = 0x01;
    public static final byte AUTH = 0x02;
    public static final byte WELCOME = 0x03;
    public static final byte REFUSED = 0x04;

    // Requests, from the node that calls.
    /** key: the replica's newest record for it. Answer: RECORD or NOT_FOUND. */
    public static final byte READ = 0x10;
    /** key, record: store it unless newer is held. Answer: DONE. */
    public static final byte WRITE = 0x11;
    /** start key, end key (optional), initial credit: a replica's records in the range. Answers: BATCH..., END. */
    public static final byte SCAN = 0x12;
    /** credit: more bytes of records the caller can take on the range stream with this id. */
    public static final byte CREDIT = 0x13;
    /** Stop the range stream with this id. No answer. */
    public static final byte CANCEL = 0x14;
    /**
     * The caller's member state (1 byte), purge horizon (8 bytes) and the start of its last repair
     * with the peer (8 bytes), then the port it answers peers on (2 bytes, unsigned; 0: not told);
     * older callers send less (the first version nothing). Proves the peer answers, lets each side
     * check that the other purged no delete it missed, and tells the peer where to call back (a
     * restarted node may listen on another port). Answer: DONE, with the status of the peer (a
     * version-2 peer's answer has the first two only, a version-1 peer's nothing). A node ignores
     * the bytes past what it knows, so what is added goes at the end, within the same version.
     */
    public static final byte PING = 0x15;
    /** Token intervals (count, then low and high of each): a digest of the keys in each. Answer: DIGESTS. */
    public static final byte DIGEST = 0x16;
    /** Low and high token, initial credit: the keys in that interval with their versions only. Answers: BATCH..., END. */
    public static final byte TOKEN_SCAN = 0x17;
    /** A timestamp in milliseconds: the sender finished a repair with this node that it started then. Answer: DONE. */
    public static final byte REPAIRED = 0x18;
    /** Records in the BATCH layout: store each unless newer is held. Answer: DONE once all are stored. Since version 2. */
    public static final byte WRITE_BATCH = 0x19;
    /** Count (uint16, at most {@link RecordBatch#MAX_KEYS}), then keys: the replica's newest record of each. Answer: RECORDS. Since version 2. */
    public static final byte READ_BATCH = 0x1A;
    /**
     * Initial credit, then token intervals (count, then low and high of each): the whole records
     * of the keys in them, tombstones included, in no particular order, at the sender's transfer
     * pace. Answers: BATCH..., END. A peer that does not know it answers UNKNOWN_MESSAGE; the
     * caller then compares key by key.
     */
    public static final byte RECORD_SCAN = 0x1B;
    /**
     * A backup's id (UTF-8, the rest of the frame): take this node's snapshot for it and upload it
     * in the background. Answer: DONE once the snapshot is taken, or ERROR saying why not (backups
     * not configured, one under way). A peer that does not know it answers UNKNOWN_MESSAGE.
     */
    public static final byte SNAPSHOT = 0x1C;

    // Answers, from the replica.
    public static final byte RECORD = 0x20;
    public static final byte NOT_FOUND = 0x21;
    public static final byte DONE = 0x22;
    /** error code (uint16), message (UTF-8, the rest of the frame). */
    public static final byte ERROR = 0x23;
    /** Records of a range stream, in key order: repeated key, int32 record length, record. */
    public static final byte BATCH = 0x24;
    /** The range stream with this id is complete. */
    public static final byte END = 0x25;
    /** For each interval asked: the digest's hash and its count of keys. */
    public static final byte DIGESTS = 0x26;
    /**
     * The answer to READ_BATCH, a {@link RecordBatch}: how many of the keys asked it covers (uint16,
     * from the first; the caller asks again for the rest), then the records found among them in the
     * BATCH layout.
     */
    public static final byte RECORDS = 0x27;

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

    public static ByteBuf read(ByteBufAllocator allocator, int id, byte[] key) {
        ByteBuf frame = begin(allocator, READ, id, 2 + key.length);
        writeKey(frame, key);
        return seal(frame);
    }

    public static ByteBuf write(ByteBufAllocator allocator, int id, byte[] key, Record record) {
        byte[] encoded = record.encoded();
        ByteBuf frame = begin(allocator, WRITE, id, 2 + key.length + encoded.length);
        writeKey(frame, key);
        frame.writeBytes(encoded);
        return seal(frame);
    }

    public static ByteBuf scan(ByteBufAllocator allocator, int id, byte[] start, byte[] end, int credit) {
        ByteBuf frame = begin(allocator, SCAN, id, 7 + start.length + (end == null ? 0 : end.length));
        writeKey(frame, start);
        frame.writeBoolean(end != null);
        if (end != null) {
            writeKey(frame, end);
        }
        frame.writeInt(credit);
        return seal(frame);
    }

    public static ByteBuf tokenScan(ByteBufAllocator allocator, int id, long low, long high, int credit) {
        ByteBuf frame = begin(allocator, TOKEN_SCAN, id, 20);
        frame.writeLong(low);
        frame.writeLong(high);
        frame.writeInt(credit);
        return seal(frame);
    }

    /** A RECORD_SCAN request: {@code intervals} holds low, high, low, high, ... */
    public static ByteBuf recordScan(ByteBufAllocator allocator, int id, long[] intervals, int credit) {
        ByteBuf frame = begin(allocator, RECORD_SCAN, id, 6 + 8 * intervals.length);
        frame.writeInt(credit);
        writePairs(frame, intervals);
        return seal(frame);
    }

    /** A DIGEST request: {@code intervals} holds low, high, low, high, ... */
    public static ByteBuf digest(ByteBufAllocator allocator, int id, long[] intervals) {
        return pairs(allocator, DIGEST, id, intervals);
    }

    /** The pairs of longs of a DIGEST or RECORD_SCAN request (low, high, ...) or a DIGESTS answer (hash, keys, ...). */
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

    /** A DIGESTS answer: {@code digests} holds hash, keys, hash, keys, ... */
    public static ByteBuf digests(ByteBufAllocator allocator, int id, long[] digests) {
        return pairs(allocator, DIGESTS, id, digests);
    }

    /** A frame of pairs of longs: their count (2 bytes), then the longs. */
    private static ByteBuf pairs(ByteBufAllocator allocator, byte type, int id, long[] values) {
        return seal(writePairs(begin(allocator, type, id, 2 + 8 * values.length), values));
    }

    private static ByteBuf writePairs(ByteBuf frame, long[] values) {
        frame.writeShort(values.length / 2);
        for (long value : values) {
            frame.writeLong(value);
        }
        return frame;
    }

    /** @param clusterPort where the caller answers peers (0: not told) */
    public static ByteBuf ping(ByteBufAllocator allocator, int id, PeerStatus caller, int clusterPort) {
        ByteBuf frame = writeStatus(begin(allocator, PING, id, PeerStatus.WIRE_BYTES + 2), caller);
        frame.writeShort(clusterPort);
        return seal(frame);
    }

    /** The caller's cluster port in a PING, read after its status; 0 from a caller that does not tell it. */
    public static int readClusterPort(ByteBuf payload) {
        return payload.readableBytes() >= 2 ? payload.readUnsignedShort() : 0;
    }

    public static ByteBuf writeStatus(ByteBuf frame, PeerStatus status) {
        frame.writeByte(status.state());
        frame.writeLong(status.purgedBefore());
        frame.writeLong(status.lastRepairWithReceiver());
        return frame;
    }

    /** A status written by {@link #writeStatus}; less from an older peer ({@link PeerStatus#UNKNOWN} if it wrote none). */
    public static PeerStatus readStatus(ByteBuf payload) {
        if (payload.readableBytes() >= PeerStatus.WIRE_BYTES) {
            return new PeerStatus(payload.readByte(), payload.readLong(), payload.readLong());
        }
        return payload.readableBytes() >= PeerStatus.VERSION_2_BYTES
                ? new PeerStatus(payload.readByte(), payload.readLong(), -1)
                : PeerStatus.UNKNOWN;
    }

    public static ByteBuf repaired(ByteBufAllocator allocator, int id, long startedMillis) {
        ByteBuf frame = begin(allocator, REPAIRED, id, 8);
        frame.writeLong(startedMillis);
        return seal(frame);
    }

    public static ByteBuf snapshot(ByteBufAllocator allocator, int id, String backup) {
        byte[] text = backup.getBytes(StandardCharsets.UTF_8);
        ByteBuf frame = begin(allocator, SNAPSHOT, id, text.length);
        frame.writeBytes(text);
        return seal(frame);
    }

    public static ByteBuf credit(ByteBufAllocator allocator, int id, int bytes) {
        ByteBuf frame = begin(allocator, CREDIT, id, 4);
        frame.writeInt(bytes);
        return seal(frame);
    }

    public static ByteBuf record(ByteBufAllocator allocator, int id, Record record) {
        byte[] encoded = record.encoded();
        ByteBuf frame = begin(allocator, RECORD, id, encoded.length);
        frame.writeBytes(encoded);
        return seal(frame);
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

    /** A WRITE_BATCH of the records, which the caller has cut to {@link RecordBatch#MAX_BYTES} (or one record). */
    public static ByteBuf writeBatch(ByteBufAllocator allocator, int id, List<KeyedRecord> records) {
        ByteBuf frame = begin(allocator, WRITE_BATCH, id, entriesSize(records));
        records.forEach(keyed -> addToBatch(frame, keyed));
        return seal(frame);
    }

    private static int entriesSize(List<KeyedRecord> records) {
        return Math.toIntExact(RecordBatch.entrySizes(records));
    }

    /** A READ_BATCH of at most {@link RecordBatch#MAX_KEYS} keys. */
    public static ByteBuf readBatch(ByteBufAllocator allocator, int id, List<byte[]> keys) {
        ByteBuf frame = begin(allocator, READ_BATCH, id, 2 + keys.stream().mapToInt(key -> 2 + key.length).sum());
        frame.writeShort(keys.size());
        keys.forEach(key -> writeKey(frame, key));
        return seal(frame);
    }

    /** The keys of a READ_BATCH: at most {@link RecordBatch#MAX_KEYS}. */
    public static List<byte[]> readKeys(ByteBuf payload, int maxKeyLength) {
        int count = payload.readUnsignedShort();
        if (count > RecordBatch.MAX_KEYS) {
            throw new MalformedFrameException(count + " keys in one batch (at most " + RecordBatch.MAX_KEYS + ")");
        }
        List<byte[]> keys = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            keys.add(readKey(payload, maxKeyLength));
        }
        if (payload.isReadable()) {
            throw new MalformedFrameException(payload.readableBytes() + " bytes after the last key");
        }
        return keys;
    }

    /** A RECORDS answer. */
    public static ByteBuf records(ByteBufAllocator allocator, int id, RecordBatch batch) {
        ByteBuf frame = begin(allocator, RECORDS, id, 2 + entriesSize(batch.found()));
        frame.writeShort(batch.covered());
        batch.found().forEach(keyed -> addToBatch(frame, keyed));
        return seal(frame);
    }

    /** A RECORDS answer's batch. */
    public static RecordBatch readRecordBatch(ByteBuf payload, int maxKeyLength, int maxRecordLength) {
        int covered = payload.readUnsignedShort();
        return new RecordBatch(covered, readRecords(payload, maxKeyLength, maxRecordLength));
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

    static void writeKey(ByteBuf frame, byte[] key) {
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
