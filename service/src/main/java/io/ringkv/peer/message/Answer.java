package io.ringkv.peer.message;

import java.time.Duration;
import java.util.function.Function;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.ringkv.peer.wire.Wire;

/** An answer to encode: frames are built on the event loop, whose buffer caches are its own. */
public interface Answer extends Function<ByteBufAllocator, ByteBuf> {

    /** Bytes of the peers' bound the answer holds until it is written. */
    default long heldBytes() {
        return 0;
    }

    /** How long to wait before sending it, on the event loop's timer; its held bytes stay held meanwhile. */
    default Duration delay() {
        return Duration.ZERO;
    }

    static Answer done(int id) {
        return allocator -> Wire.empty(allocator, Wire.DONE, id);
    }

    static Answer error(int id, Wire.ErrorCode code, String message) {
        return allocator -> Wire.error(allocator, id, code, message);
    }

    /** An answer that holds bytes of the peers' bound until its frame is written (or fails to be). */
    static Answer held(long heldBytes, Answer frame) {
        return new Answer() {
            @Override
            public ByteBuf apply(ByteBufAllocator allocator) {
                return frame.apply(allocator);
            }

            @Override
            public long heldBytes() {
                return heldBytes;
            }
        };
    }

    /** The answer, sent once the delay has passed. */
    static Answer paced(Answer answer, Duration delay) {
        return new Answer() {
            @Override
            public ByteBuf apply(ByteBufAllocator allocator) {
                return answer.apply(allocator);
            }

            @Override
            public long heldBytes() {
                return answer.heldBytes();
            }

            @Override
            public Duration delay() {
                return delay;
            }
        };
    }
}
