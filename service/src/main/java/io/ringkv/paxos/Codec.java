package io.ringkv.paxos;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.util.function.Function;

/**
 * Reading the binary forms of this package ({@link PaxosState} on disk, {@link Promise} on the
 * wire): both come from outside the process, so every length is checked and any malformed input
 * is one exception, {@link MalformedStateException}.
 */
final class Codec {

    /** The first byte of every form: a later one (a TTL, say) is read beside it. */
    static final byte FORMAT_V1 = 1;

    private Codec() {
    }

    static <T> T decode(byte[] bytes, String what, Function<ByteBuffer, T> reader) {
        ByteBuffer buffer = ByteBuffer.wrap(bytes);
        try {
            if (buffer.get() != FORMAT_V1) {
                throw new MalformedStateException("unknown format of " + what + ": " + bytes[0]);
            }
            T read = reader.apply(buffer);
            if (buffer.hasRemaining()) {
                throw new MalformedStateException(buffer.remaining() + " bytes after the end of " + what);
            }
            return read;
        } catch (BufferUnderflowException e) {
            throw new MalformedStateException(what + " of " + bytes.length + " bytes is cut short");
        }
    }

    static boolean flag(ByteBuffer buffer) {
        byte flag = buffer.get();
        if (flag != 0 && flag != 1) {
            throw new MalformedStateException("a flag of " + flag);
        }
        return flag == 1;
    }

    /** Input that is not a form of this package (a corrupt file, a hostile peer). */
    public static final class MalformedStateException extends IllegalArgumentException {
        MalformedStateException(String message) {
            super(message);
        }
    }
}
