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
        return new Shaped(frame, heldBytes, Duration.ZERO);
    }

    /** The answer, sent once the delay has passed. */
    static Answer paced(Answer answer, Duration delay) {
        return new Shaped(answer, answer.heldBytes(), delay);
    }

    /** A frame with the bytes it holds and the delay before it is sent: what {@link #held} and {@link #paced} make. */
    record Shaped(Answer frame, long heldBytes, Duration delay) implements Answer {
        @Override
        public ByteBuf apply(ByteBufAllocator allocator) {
            return frame.apply(allocator);
        }
    }
}
