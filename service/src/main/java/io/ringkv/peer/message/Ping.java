package io.ringkv.peer.message;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.TreeMap;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.ringkv.peer.wire.PeerStatus;
import io.ringkv.peer.wire.Wire;
import io.ringkv.ring.Member;

/**
 * PING: the caller's member state (1 byte), purge horizon (8 bytes) and the start of its last
 * repair with the peer (8 bytes), then the port it answers peers on (2 bytes, unsigned; 0: not
 * told), then its attributes as a member (its zone; layout below); older callers send less (the
 * first version nothing). Proves the peer answers, lets each side check that the other purged no
 * delete it missed, tells the peer where to call back (a restarted node may listen on another
 * port) and what the caller is besides its name. Answer: DONE, with the status of the peer, then
 * its attributes (a node before attributes answers the status alone, a version-2 peer the first
 * two fields, a version-1 peer nothing).
 *
 * <p>Attributes: a count (uint8), then each key and its value, every one a length (uint8) and
 * that many ASCII bytes of {@link Member}'s form; attributes that are not (malformed, or too
 * many) are dropped whole, as if the peer told none.
 *
 * <p>How the layout grows without breaking a rolling upgrade: a node reads the fields it knows,
 * in order, and ignores the bytes past them (the server releases the frame whole, and the
 * caller's answer reader stops where it knows to), so an older node reads a newer PING and its
 * answer as its own; and a field a newer node looks for and does not find is absent (a port of
 * 0, no attributes), so it reads an older one's. A new field therefore goes at the end, within the
 * same protocol version, with an absent value the receiver can act on.
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
            return readStatus(payload).withAttributes(readAttributes(payload));
        });
    }

    /** @param clusterPort where the caller answers peers (0: not told) */
    public static ByteBuf frame(ByteBufAllocator allocator, int id, PeerStatus caller, int clusterPort) {
        ByteBuf frame = writeStatus(Wire.begin(allocator, TYPE, id, PeerStatus.WIRE_BYTES + 2 + attributesBytes(caller)), caller);
        frame.writeShort(clusterPort);
        return Wire.seal(writeAttributes(frame, caller.attributes()));
    }

    /** The answer to a PING: the status of the node that answers, and its attributes. */
    public static ByteBuf answer(ByteBufAllocator allocator, int id, PeerStatus status) {
        ByteBuf frame = writeStatus(Wire.begin(allocator, Wire.DONE, id, PeerStatus.WIRE_BYTES + attributesBytes(status)), status);
        return Wire.seal(writeAttributes(frame, status.attributes()));
    }

    /** The caller's cluster port in a PING, read after its status; 0 from a caller that does not tell it. */
    public static int readClusterPort(ByteBuf payload) {
        return payload.readableBytes() >= 2 ? payload.readUnsignedShort() : 0;
    }

    /** The status's fixed part, without its attributes (they go after the port, in a PING). */
    public static ByteBuf writeStatus(ByteBuf frame, PeerStatus status) {
        frame.writeByte(status.state());
        frame.writeLong(status.purgedBefore());
        frame.writeLong(status.lastRepairWithReceiver());
        return frame;
    }

    /**
     * A status written by {@link #writeStatus}, without attributes; less from an older peer
     * ({@link PeerStatus#UNKNOWN} if it wrote none).
     */
    public static PeerStatus readStatus(ByteBuf payload) {
        if (payload.readableBytes() >= PeerStatus.WIRE_BYTES) {
            return new PeerStatus(payload.readByte(), payload.readLong(), payload.readLong());
        }
        return payload.readableBytes() >= PeerStatus.VERSION_2_BYTES
                ? new PeerStatus(payload.readByte(), payload.readLong(), -1)
                : PeerStatus.UNKNOWN;
    }

    public static ByteBuf writeAttributes(ByteBuf frame, Map<String, String> attributes) {
        frame.writeByte(attributes.size());
        new TreeMap<>(attributes).forEach((key, value) -> {
            writeText(frame, key);
            writeText(frame, value);
        });
        return frame;
    }

    /** Attributes written by {@link #writeAttributes}, read to the end; none from an older peer, or if they are not of a member's form. */
    public static Map<String, String> readAttributes(ByteBuf payload) {
        if (!payload.isReadable()) {
            return Map.of();
        }
        int count = payload.readUnsignedByte();
        Map<String, String> attributes = new TreeMap<>();
        for (int i = 0; i < count; i++) {
            String key = readText(payload);
            String value = readText(payload);
            if (key == null || value == null) {
                return Map.of();
            }
            attributes.put(key, value);
        }
        return Member.validAttributes(attributes) ? attributes : Map.of();
    }

    private static int attributesBytes(PeerStatus status) {
        return 1 + status.attributes().entrySet().stream().mapToInt(entry -> 2 + entry.getKey().length() + entry.getValue().length()).sum();
    }

    private static void writeText(ByteBuf frame, String text) {
        byte[] bytes = text.getBytes(StandardCharsets.US_ASCII);
        frame.writeByte(bytes.length);
        frame.writeBytes(bytes);
    }

    /** A length and that many bytes; null where the payload ends first. */
    private static String readText(ByteBuf payload) {
        if (!payload.isReadable()) {
            return null;
        }
        int length = payload.readUnsignedByte();
        return payload.readableBytes() >= length ? payload.readCharSequence(length, StandardCharsets.US_ASCII).toString() : null;
    }

    @Override
    public void serve(Exchange exchange, int id, ByteBuf payload, Trust.Decision decision) {
        PeerStatus fixed = readStatus(payload);
        int clusterPort = readClusterPort(payload);
        PeerStatus told = fixed.withAttributes(readAttributes(payload));
        if (decision == Trust.Decision.SERVE) {
            // Before the answer: a restarted node counts this one told once it is answered.
            exchange.service().heardFrom(exchange.peerName(), clusterPort);
        } else {
            told = PeerStatus.UNKNOWN;
        }
        PeerStatus status = exchange.service().status(exchange.peerName(), told);
        exchange.send(allocator -> answer(allocator, id, status));
    }
}
