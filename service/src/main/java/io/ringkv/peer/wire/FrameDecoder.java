package io.ringkv.peer.wire;

import java.nio.ByteOrder;

import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.CorruptedFrameException;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.handler.codec.TooLongFrameException;

/**
 * Cuts the byte stream into frames ({@link Wire}) and hands each on without its length field.
 * Until the handshake has succeeded a frame may be only {@value #HANDSHAKE_LIMIT} bytes: a
 * connection that has not proven the secret cannot make the node buffer a large frame. A frame over
 * the limit, or too short to hold a type and an id, ends the connection.
 */
public final class FrameDecoder extends LengthFieldBasedFrameDecoder {

    public static final int HANDSHAKE_LIMIT = 4096;

    private boolean authenticated;

    /** @param maxFrame the largest frame, length field excluded, once the peer is authenticated */
    public FrameDecoder(int maxFrame) {
        super(maxFrame, 0, Wire.LENGTH_FIELD, 0, Wire.LENGTH_FIELD);
    }

    /** Called on the channel's event loop once the handshake succeeded. */
    public void authenticated() {
        authenticated = true;
    }

    @Override
    protected long getUnadjustedFrameLength(ByteBuf buffer, int offset, int length, ByteOrder order) {
        long frame = super.getUnadjustedFrameLength(buffer, offset, length, order);
        if (frame < Wire.HEADER - Wire.LENGTH_FIELD) {
            throw new CorruptedFrameException("a frame of " + frame + " bytes cannot hold a type and an id");
        }
        if (!authenticated && frame > HANDSHAKE_LIMIT) {
            throw new TooLongFrameException("a frame of " + frame + " bytes before the handshake (at most " + HANDSHAKE_LIMIT + ")");
        }
        return frame;
    }
}
