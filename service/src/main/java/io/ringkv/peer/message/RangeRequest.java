package io.ringkv.peer.message;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * The opening of a range stream as the calling side sends it: its records come back in BATCH
 * frames until END, at most {@code credit} bytes ahead of what the caller has taken ({@link Credit}).
 */
@FunctionalInterface
public interface RangeRequest {

    ByteBuf open(ByteBufAllocator allocator, int id, int credit);
}
