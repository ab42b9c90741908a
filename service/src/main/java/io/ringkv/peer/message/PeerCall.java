package io.ringkv.peer.message;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.ringkv.peer.wire.Wire;

/**
 * A request as the calling side sends it: its frame, how its answer reads, and whether it is
 * work over a range (a repair's or a data movement's call, which may take longer). Made by the
 * message's unit, so that the client's connection carries any message without knowing it.
 *
 * @param <T> what the answer says
 */
public record PeerCall<T>(Request request, AnswerReader<T> answer, boolean rangeWork) {

    /** The request's frame under the id its connection gave it. */
    @FunctionalInterface
    public interface Request {
        ByteBuf encode(ByteBufAllocator allocator, int id);
    }

    /** Reads the answer (not an ERROR: the connection fails the call with that itself). */
    @FunctionalInterface
    public interface AnswerReader<T> {
        T read(byte type, ByteBuf payload, FrameLimits limits);
    }

    /** A call whose deadline is the timeout. */
    public static <T> PeerCall<T> point(Request request, AnswerReader<T> answer) {
        return new PeerCall<>(request, answer, false);
    }

    /** A call of repair or data movement, which may take several timeouts while the peer still answers. */
    public static <T> PeerCall<T> rangeWork(Request request, AnswerReader<T> answer) {
        return new PeerCall<>(request, answer, true);
    }

    /** Reads a DONE answer, which says nothing more. */
    public static Boolean done(byte type, ByteBuf payload, FrameLimits limits) {
        if (type != Wire.DONE) {
            throw unexpected(type);
        }
        return Boolean.TRUE;
    }

    public static IllegalStateException unexpected(byte type) {
        return new IllegalStateException("unexpected answer of type " + type);
    }
}
