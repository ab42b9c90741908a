package io.ringkv.peer.message;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.ringkv.peer.wire.Wire;

/**
 * REPAIRED: a timestamp in milliseconds: the sender finished a repair with this node that it
 * started then. Answer: DONE. Changes the repair ledger, and through it the tombstone purge
 * cutoff: members only.
 */
public final class Repaired extends PeerMessage {

    public static final byte TYPE = 0x18;

    Repaired() {
        super(TYPE, Trust.MEMBERS);
    }

    public static PeerCall<Boolean> request(long startedMillis) {
        return PeerCall.point((allocator, id) -> frame(allocator, id, startedMillis), PeerCall::done);
    }

    public static ByteBuf frame(ByteBufAllocator allocator, int id, long startedMillis) {
        ByteBuf frame = Wire.begin(allocator, TYPE, id, 8);
        frame.writeLong(startedMillis);
        return Wire.seal(frame);
    }

    @Override
    public void serve(Exchange exchange, int id, ByteBuf payload, Trust.Decision decision) {
        long startedMillis = payload.readLong();
        if (exchange.service().repaired(exchange.peerName(), startedMillis)) {
            exchange.send(Answer.done(id));
        } else {
            exchange.send(Answer.error(id, Wire.ErrorCode.BAD_REQUEST, "a repair that started at " + startedMillis
                    + " ms, later than this node's clock allows"));
        }
    }
}
