package io.ringkv.peer.message;

import java.util.Optional;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.ringkv.peer.wire.Wire;
import io.ringkv.record.Record;

/** READ: key; the replica's newest record for it, tombstones included. Answer: RECORD (the record) or NOT_FOUND. */
public final class Read extends PeerMessage {

    public static final byte TYPE = 0x10;
    public static final byte RECORD = 0x20;
    public static final byte NOT_FOUND = 0x21;

    Read() {
        super(TYPE, Trust.SECRET);
    }

    public static PeerCall<Optional<Record>> request(byte[] key) {
        return PeerCall.point((allocator, id) -> frame(allocator, id, key), (type, payload, limits) -> switch (type) {
            case RECORD -> Optional.of(Wire.readRecord(payload, limits.maxRecordLength()));
            case NOT_FOUND -> Optional.empty();
            default -> throw PeerCall.unexpected(type);
        });
    }

    public static ByteBuf frame(ByteBufAllocator allocator, int id, byte[] key) {
        ByteBuf frame = Wire.begin(allocator, TYPE, id, 2 + key.length);
        Wire.writeKey(frame, key);
        return Wire.seal(frame);
    }

    @Override
    public void serve(Exchange exchange, int id, ByteBuf payload, Trust.Decision decision) {
        byte[] key = Wire.readKey(payload, exchange.limits().maxKeyLength());
        // In memory (most reads of a working set that fits the cache): answered right here.
        var cached = exchange.service().readIfCached(key);
        if (cached.known() && (cached.found().isEmpty() || exchange.tryHold(size(cached.found())))) {
            exchange.send(found(id, cached.found()));
        } else {
            // Not in memory, or no room for its bytes now: read on a storage thread, which may
            // wait for room (up to the read wait: a burst of large reads is answered as room comes
            // back rather than refused). Read again there rather than queue the value: a queue of
            // values waiting is what the bound is for.
            exchange.onStorage(id, () -> {
                Optional<Record> record = exchange.service().read(key);
                return exchange.heldWithin(id, record.isPresent() ? size(record) : 0, () -> found(id, record));
            });
        }
    }

    /**
     * The answer to a read whose value's bytes are held already: they stay held until its frame
     * is written. A burst of reads of large values would otherwise hold more of them, read and
     * framed, than the heap and the direct memory can.
     */
    private static Answer found(int id, Optional<Record> record) {
        if (record.isEmpty()) {
            return allocator -> Wire.empty(allocator, NOT_FOUND, id);
        }
        return Answer.held(size(record), allocator -> {
            byte[] encoded = record.get().encoded();
            ByteBuf frame = Wire.begin(allocator, RECORD, id, encoded.length);
            frame.writeBytes(encoded);
            return Wire.seal(frame);
        });
    }

    private static long size(Optional<Record> record) {
        return record.get().valueLength();
    }
}
