package io.ringkv.peer.message;

import io.netty.buffer.ByteBuf;
import io.ringkv.peer.wire.Wire;
import io.ringkv.ring.TokenIntervalSet;

/**
 * RECORD_SCAN: initial credit, then token intervals (count, then low and high of each): the whole
 * records of the keys in them, tombstones included, in no particular order, at the sender's
 * transfer pace. Answers: BATCH..., END. A peer that does not know it answers UNKNOWN_MESSAGE;
 * the caller then compares key by key.
 */
public final class RecordScan extends PeerMessage {

    public static final byte TYPE = 0x1B;

    RecordScan() {
        super(TYPE, Trust.SECRET);
    }

    /** @param intervals low, high, low, high, ... */
    public static RangeRequest request(long[] intervals) {
        return (allocator, id, credit) -> {
            ByteBuf frame = Wire.begin(allocator, TYPE, id, 6 + 8 * intervals.length);
            frame.writeInt(credit);
            return Wire.seal(Wire.writePairs(frame, intervals));
        };
    }

    @Override
    public void serve(Exchange exchange, int id, ByteBuf payload, Trust.Decision decision) {
        int credit = payload.readInt();
        long[] bounds = Wire.readPairs(payload);
        if (exchange.refusedAsTooMany(id, bounds, "record scan")) {
            return;
        }
        TokenIntervalSet intervals;
        try {
            intervals = TokenIntervalSet.of(bounds);
        } catch (IllegalArgumentException e) {
            exchange.send(Answer.error(id, Wire.ErrorCode.BAD_REQUEST, e.getMessage()));
            return;
        }
        // Paced like READ_BATCH's answers: the transfer a rebuild pulls yields to this node's clients.
        exchange.stream(id, () -> exchange.service().openTokenIntervals(intervals), credit, exchange.service()::paceTransfer);
    }
}
