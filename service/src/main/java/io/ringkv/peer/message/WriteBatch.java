package io.ringkv.peer.message;

import java.util.List;

import io.netty.buffer.ByteBuf;
import io.ringkv.peer.wire.Wire;
import io.ringkv.record.KeyedRecord;
import io.ringkv.record.RecordBatch;

/**
 * WRITE_BATCH: records in the BATCH layout: store each unless newer is held. Answer: DONE once
 * all are stored. Since version 2. Changes state: members only.
 */
public final class WriteBatch extends PeerMessage {

    public static final byte TYPE = 0x19;

    WriteBatch() {
        super(TYPE, Trust.MEMBERS);
    }

    /** The records, which the caller has cut to {@link RecordBatch#MAX_BYTES} (or one record); range work. */
    public static PeerCall<Boolean> request(List<KeyedRecord> records) {
        return PeerCall.rangeWork((allocator, id) -> {
            ByteBuf frame = Wire.begin(allocator, TYPE, id, Math.toIntExact(RecordBatch.entrySizes(records)));
            records.forEach(keyed -> Wire.addToBatch(frame, keyed));
            return Wire.seal(frame);
        }, PeerCall::done);
    }

    @Override
    public void serve(Exchange exchange, int id, ByteBuf payload, Trust.Decision decision) {
        FrameLimits limits = exchange.limits();
        exchange.write(id, Wire.readRecords(payload, limits.maxKeyLength(), limits.maxRecordLength()));
    }
}
