package io.ringkv.peer.message;

import io.netty.buffer.ByteBuf;
import io.ringkv.peer.wire.Wire;

/**
 * TOKEN_SCAN: low and high token, initial credit: the keys with a token in {@code [low, high]},
 * in token order, with their versions only (a repair's comparison). Answers: BATCH..., END.
 */
public final class TokenScan extends PeerMessage {

    public static final byte TYPE = 0x17;

    TokenScan() {
        super(TYPE, Trust.SECRET);
    }

    public static RangeRequest request(long low, long high) {
        return (allocator, id, credit) -> {
            ByteBuf frame = Wire.begin(allocator, TYPE, id, 20);
            frame.writeLong(low);
            frame.writeLong(high);
            frame.writeInt(credit);
            return Wire.seal(frame);
        };
    }

    @Override
    public void serve(Exchange exchange, int id, ByteBuf payload, Trust.Decision decision) {
        long low = payload.readLong();
        long high = payload.readLong();
        exchange.stream(id, () -> exchange.service().openTokenRange(low, high), payload.readInt(), Exchange.UNPACED);
    }
}
