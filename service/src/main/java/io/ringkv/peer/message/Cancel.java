package io.ringkv.peer.message;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.ringkv.peer.wire.Wire;

/** CANCEL: stop the range stream with this id. No answer. */
public final class Cancel extends PeerMessage {

    public static final byte TYPE = 0x14;

    Cancel() {
        super(TYPE, Trust.SECRET);
    }

    public static ByteBuf frame(ByteBufAllocator allocator, int id) {
        return Wire.empty(allocator, TYPE, id);
    }

    @Override
    public void serve(Exchange exchange, int id, ByteBuf payload, Trust.Decision decision) {
        exchange.cancel(id);
    }
}
