package io.ringkv.peer.message;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.ringkv.peer.wire.Wire;

/**
 * DIGEST: token intervals (count, then low and high of each): a digest of the keys in each.
 * Answer: DIGESTS, for each interval asked the digest's hash and its count of keys.
 */
public final class Digest extends PeerMessage {

    public static final byte TYPE = 0x16;
    public static final byte DIGESTS = 0x26;

    Digest() {
        super(TYPE, Trust.SECRET);
    }

    /** The peer's digests (hash, keys, ...) of the token intervals (low, high, ...); range work. */
    public static PeerCall<long[]> request(long[] intervals) {
        return PeerCall.rangeWork((allocator, id) -> frame(allocator, id, intervals), (type, payload, limits) -> {
            if (type != DIGESTS) {
                throw PeerCall.unexpected(type);
            }
            return Wire.readPairs(payload);
        });
    }

    /** @param intervals low, high, low, high, ... */
    public static ByteBuf frame(ByteBufAllocator allocator, int id, long[] intervals) {
        return pairs(allocator, TYPE, id, intervals);
    }

    @Override
    public void serve(Exchange exchange, int id, ByteBuf payload, Trust.Decision decision) {
        long[] intervals = Wire.readPairs(payload);
        if (exchange.refusedAsTooMany(id, intervals, "digest request")) {
            return;
        }
        exchange.onStorage(id, () -> {
            long[] digests = exchange.service().digest(intervals);
            return allocator -> pairs(allocator, DIGESTS, id, digests);
        });
    }

    private static ByteBuf pairs(ByteBufAllocator allocator, byte type, int id, long[] values) {
        return Wire.seal(Wire.writePairs(Wire.begin(allocator, type, id, 2 + 8 * values.length), values));
    }
}
