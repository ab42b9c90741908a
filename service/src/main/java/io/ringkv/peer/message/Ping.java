package io.ringkv.peer.message;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.ringkv.peer.wire.PeerStatus;
import io.ringkv.peer.wire.Wire;

/**
 * PING: the caller's member state (1 byte), purge horizon (8 bytes) and the start of its last
 * repair with the peer (8 bytes), then the port it answers peers on (2 bytes, unsigned; 0: not
 * told); older callers send less (the first version nothing). Proves the peer answers, lets each
 * side check that the other purged no delete it missed, and tells the peer where to call back (a
 * restarted node may listen on another port). Answer: DONE, with the status of the peer (a
 * version-2 peer's answer has the first two only, a version-1 peer's nothing). A node ignores the
 * bytes past what it knows, so what is added goes at the end, within the same version.
 *
 * <p>Answered to anyone with the secret, as a sign of life; what it tells is heard from members only.
 */
public final class Ping extends PeerMessage {

    public static final byte TYPE = 0x15;

    Ping() {
        super(TYPE, Trust.SECRET_HEARD_FROM_MEMBERS);
    }

    /** Tells the peer the caller's status and cluster port (0: not told); what its answer tells about it. */
    public static PeerCall<PeerStatus> request(PeerStatus caller, int clusterPort) {
        return PeerCall.point((allocator, id) -> frame(allocator, id, caller, clusterPort), (type, payload, limits) -> {
            PeerCall.done(type, payload, limits);
            return readStatus(payload);
        });
    }

    /** @param clusterPort where the caller answers peers (0: not told) */
    public static ByteBuf frame(ByteBufAllocator allocator, int id, PeerStatus caller, int clusterPort) {
        ByteBuf frame = writeStatus(Wire.begin(allocator, TYPE, id, PeerStatus.WIRE_BYTES + 2), caller);
        frame.writeShort(clusterPort);
        return Wire.seal(frame);
    }

    /** The caller's cluster port in a PING, read after its status; 0 from a caller that does not tell it. */
    public static int readClusterPort(ByteBuf payload) {
        return payload.readableBytes() >= 2 ? payload.readUnsignedShort() : 0;
    }

    public static ByteBuf writeStatus(ByteBuf frame, PeerStatus status) {
        frame.writeByte(status.state());
        frame.writeLong(status.purgedBefore());
        frame.writeLong(status.lastRepairWithReceiver());
        return frame;
    }

    /** A status written by {@link #writeStatus}; less from an older peer ({@link PeerStatus#UNKNOWN} if it wrote none). */
    public static PeerStatus readStatus(ByteBuf payload) {
        if (payload.readableBytes() >= PeerStatus.WIRE_BYTES) {
            return new PeerStatus(payload.readByte(), payload.readLong(), payload.readLong());
        }
        return payload.readableBytes() >= PeerStatus.VERSION_2_BYTES
                ? new PeerStatus(payload.readByte(), payload.readLong(), -1)
                : PeerStatus.UNKNOWN;
    }

    @Override
    public void serve(Exchange exchange, int id, ByteBuf payload, Trust.Decision decision) {
        PeerStatus told = readStatus(payload);
        int clusterPort = readClusterPort(payload);
        if (decision == Trust.Decision.SERVE) {
            // Before the answer: a restarted node counts this one told once it is answered.
            exchange.service().heardFrom(exchange.peerName(), clusterPort);
        } else {
            told = PeerStatus.UNKNOWN;
        }
        PeerStatus status = exchange.service().status(exchange.peerName(), told);
        exchange.send(allocator -> Wire.seal(writeStatus(Wire.begin(allocator, Wire.DONE, id, PeerStatus.WIRE_BYTES), status)));
    }
}
