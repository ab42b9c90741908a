package io.ringkv.peer.message;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.ringkv.peer.wire.Wire;

/** CREDIT: bytes: how many more bytes of records the caller can take on the range stream with this id. No answer. */
public final class Credit extends PeerMessage {

    public static final byte TYPE = 0x13;

    Credit() {
        super(TYPE, Trust.SECRET);
    }

    public static ByteBuf frame(ByteBufAllocator allocator, int id, int bytes) {
        ByteBuf frame = Wire.begin(allocator, TYPE, id, 4);
        frame.writeInt(bytes);
        return Wire.seal(frame);
    }

    @Override
    public void serve(Exchange exchange, int id, ByteBuf payload, Trust.Decision decision) {
        exchange.credit(id, payload.readInt());
    }
}
