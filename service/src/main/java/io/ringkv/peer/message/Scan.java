package io.ringkv.peer.message;

import io.netty.buffer.ByteBuf;
import io.ringkv.peer.wire.Wire;

/**
 * SCAN: start key, end key (optional), initial credit: a replica's records with
 * {@code start <= key < end}, tombstones included, in key order. Answers: BATCH..., END.
 */
public final class Scan extends PeerMessage {

    public static final byte TYPE = 0x12;

    Scan() {
        super(TYPE, Trust.SECRET);
    }

    /** @param end null: to the last key */
    public static RangeRequest request(byte[] start, byte[] end) {
        return (allocator, id, credit) -> {
            ByteBuf frame = Wire.begin(allocator, TYPE, id, 7 + start.length + (end == null ? 0 : end.length));
            Wire.writeKey(frame, start);
            frame.writeBoolean(end != null);
            if (end != null) {
                Wire.writeKey(frame, end);
            }
            frame.writeInt(credit);
            return Wire.seal(frame);
        };
    }

    @Override
    public void serve(Exchange exchange, int id, ByteBuf payload, Trust.Decision decision) {
        int maxKey = exchange.limits().maxKeyLength();
        byte[] start = Wire.readKey(payload, maxKey);
        byte[] end = payload.readBoolean() ? Wire.readKey(payload, maxKey) : null;
        exchange.stream(id, () -> exchange.service().openRange(start, end), payload.readInt(), Exchange.UNPACED);
    }
}
