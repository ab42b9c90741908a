package io.ringkv.peer.wire;

import io.netty.buffer.ByteBuf;

/** A call to a peer that did not succeed; its kind tells whether the peer is to blame. */
public abstract sealed class PeerException extends RuntimeException {

    private final String peer;

    PeerException(String peer, String message) {
        super(peer + ": " + message, null, false, false);
        this.peer = peer;
    }

    public String peer() {
        return peer;
    }

    /** Whether it says the peer is unwell, so that its circuit breaker should count it. */
    public abstract boolean peerFailure();

    public static PeerException from(String peer, ByteBuf errorPayload) {
        Wire.ErrorCode code = Wire.ErrorCode.of(errorPayload.readUnsignedShort());
        return new Remote(peer, code, Wire.readText(errorPayload));
    }

    /** No usable connection: the peer is down, unreachable, or the connection broke. */
    public static final class Unavailable extends PeerException {
        public Unavailable(String peer, String message) {
            super(peer, message);
        }

        @Override
        public boolean peerFailure() {
            return true;
        }
    }

    /**
     * One request got no answer within the timeout, on a connection that stays open. A peer that
     * still answers other requests is busy (a disk that every node shares, a compaction), and its
     * breaker lets that pass; one that answers none is stuck ({@code PeerMonitor}). A peer that
     * hangs altogether is found by the connection, whose liveness ping gets no answer either: it
     * closes, and what fails with it is {@link Unavailable}.
     */
    public static final class TimedOut extends PeerException {
        public TimedOut(String peer, String message) {
            super(peer, message);
        }

        @Override
        public boolean peerFailure() {
            return true;
        }
    }

    /** The peer and this node do not share the cluster secret: it refused this node, or could not prove it knows it. */
    public static final class Refused extends PeerException {
        public Refused(String peer, String reason) {
            super(peer, "refused: " + reason);
        }

        @Override
        public boolean peerFailure() {
            return true;
        }
    }

    /** The peer answered with an error. */
    public static final class Remote extends PeerException {
        private final Wire.ErrorCode code;

        public Remote(String peer, Wire.ErrorCode code, String message) {
            super(peer, code + ": " + message);
            this.code = code;
        }

        public Wire.ErrorCode code() {
            return code;
        }

        @Override
        public boolean peerFailure() {
            return code.peerFailure();
        }
    }
}
