package io.ringkv.peer.message;

import java.util.ArrayList;
import java.util.List;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.ringkv.peer.wire.Wire;
import io.ringkv.record.RecordBatch;

/**
 * READ_BATCH: count (uint16, at most {@link RecordBatch#MAX_KEYS}), then keys: the replica's
 * newest record of each. Answer: RECORDS, a {@link RecordBatch}: how many of the keys asked it
 * covers (uint16, from the first; the caller asks again for the rest), then the records found
 * among them in the BATCH layout. Since version 2.
 */
public final class ReadBatch extends PeerMessage {

    public static final byte TYPE = 0x1A;
    public static final byte RECORDS = 0x27;

    ReadBatch() {
        super(TYPE, Trust.SECRET);
    }

    /** The peer's records of the first of at most {@link RecordBatch#MAX_KEYS} keys; range work. */
    public static PeerCall<RecordBatch> request(List<byte[]> keys) {
        return PeerCall.rangeWork((allocator, id) -> frame(allocator, id, keys), (type, payload, limits) -> {
            if (type != RECORDS) {
                throw PeerCall.unexpected(type);
            }
            int covered = payload.readUnsignedShort();
            return new RecordBatch(covered, Wire.readRecords(payload, limits.maxKeyLength(), limits.maxRecordLength()));
        });
    }

    public static ByteBuf frame(ByteBufAllocator allocator, int id, List<byte[]> keys) {
        ByteBuf frame = Wire.begin(allocator, TYPE, id, 2 + keys.stream().mapToInt(key -> 2 + key.length).sum());
        frame.writeShort(keys.size());
        keys.forEach(key -> Wire.writeKey(frame, key));
        return Wire.seal(frame);
    }

    @Override
    public void serve(Exchange exchange, int id, ByteBuf payload, Trust.Decision decision) {
        List<byte[]> keys = readKeys(payload, exchange.limits().maxKeyLength());
        exchange.onStorage(id, () -> readAll(exchange, id, keys));
    }

    private static List<byte[]> readKeys(ByteBuf payload, int maxKeyLength) {
        int count = payload.readUnsignedShort();
        if (count > RecordBatch.MAX_KEYS) {
            throw new Wire.MalformedFrameException(count + " keys in one batch (at most " + RecordBatch.MAX_KEYS + ")");
        }
        List<byte[]> keys = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            keys.add(Wire.readKey(payload, maxKeyLength));
        }
        if (payload.isReadable()) {
            throw new Wire.MalformedFrameException(payload.readableBytes() + " bytes after the last key");
        }
        return keys;
    }

    /**
     * On a storage thread: a batch of the keys' records, its bytes held like a read's, and sent
     * at the pace of this node's background transfers (only repair and data movement ask for batches).
     */
    private static Answer readAll(Exchange exchange, int id, List<byte[]> keys) {
        RecordBatch batch = RecordBatch.read(keys, exchange.service()::read);
        long held = batch.valueBytes();
        return exchange.heldWithin(id, held, () -> Answer.paced(Answer.held(held, allocator -> records(allocator, id, batch)),
                exchange.service().paceTransfer(RecordBatch.entrySizes(batch.found()))));
    }

    private static ByteBuf records(ByteBufAllocator allocator, int id, RecordBatch batch) {
        ByteBuf frame = Wire.begin(allocator, RECORDS, id, 2 + Math.toIntExact(RecordBatch.entrySizes(batch.found())));
        frame.writeShort(batch.covered());
        batch.found().forEach(keyed -> Wire.addToBatch(frame, keyed));
        return Wire.seal(frame);
    }
}
