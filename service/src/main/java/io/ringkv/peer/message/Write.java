package io.ringkv.peer.message;

import java.util.List;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.ringkv.peer.wire.Wire;
import io.ringkv.record.KeyedRecord;
import io.ringkv.record.Record;

/** WRITE: key, record: store it unless newer is held. Answer: DONE. Changes state: members only. */
public final class Write extends PeerMessage {

    public static final byte TYPE = 0x11;

    Write() {
        super(TYPE, Trust.MEMBERS);
    }

    public static PeerCall<Boolean> request(byte[] key, Record record) {
        return PeerCall.point((allocator, id) -> frame(allocator, id, key, record), PeerCall::done);
    }

    public static ByteBuf frame(ByteBufAllocator allocator, int id, byte[] key, Record record) {
        byte[] encoded = record.encoded();
        ByteBuf frame = Wire.begin(allocator, TYPE, id, 2 + key.length + encoded.length);
        Wire.writeKey(frame, key);
        frame.writeBytes(encoded);
        return Wire.seal(frame);
    }

    @Override
    public void serve(Exchange exchange, int id, ByteBuf payload, Trust.Decision decision) {
        byte[] key = Wire.readKey(payload, exchange.limits().maxKeyLength());
        Record record = Wire.readRecord(payload, exchange.limits().maxRecordLength());
        exchange.write(id, List.of(new KeyedRecord(key, record)));
    }
}
