package io.ringkv.peer.message;

import io.netty.buffer.ByteBuf;
import io.ringkv.paxos.Ballot;
import io.ringkv.peer.wire.Wire;

/** What the Paxos units ({@link PaxosPrepare}, {@link PaxosAccept}, {@link PaxosCommit}) write and read alike. */
final class PaxosMessages {

    private PaxosMessages() {
    }

    static ByteBuf writeBallot(ByteBuf frame, Ballot ballot) {
        return frame.writeLong(ballot.time()).writeLong(ballot.proposer());
    }

    static Ballot readBallot(ByteBuf payload) {
        if (payload.readableBytes() < 16) {
            throw new Wire.MalformedFrameException("a ballot cut short");
        }
        return new Ballot(payload.readLong(), payload.readLong());
    }

    /** The rest of the payload; a malformed form in it fails its decoding, as input. */
    static byte[] rest(ByteBuf payload) {
        byte[] bytes = new byte[payload.readableBytes()];
        payload.readBytes(bytes);
        return bytes;
    }

    /** Decodes a form of {@code io.ringkv.paxos} from a request: malformed, it is answered as a malformed request. */
    static <T> T decoded(java.util.function.Supplier<T> decode) {
        try {
            return decode.get();
        } catch (IllegalArgumentException e) {
            throw new Wire.MalformedFrameException(e.getMessage());
        }
    }

    /** An answer of the type whose payload is the bytes. */
    static Answer bytes(byte type, int id, byte[] bytes) {
        return allocator -> {
            ByteBuf frame = Wire.begin(allocator, type, id, bytes.length);
            frame.writeBytes(bytes);
            return Wire.seal(frame);
        };
    }
}
