package io.ringkv.peer.message;

import java.nio.charset.StandardCharsets;

import io.netty.buffer.ByteBuf;
import io.ringkv.peer.wire.Wire;

/**
 * SNAPSHOT: a backup's id (UTF-8, the rest of the frame): take this node's snapshot for it and
 * upload it in the background. Answer: DONE once the snapshot is taken, or ERROR saying why not
 * (backups not configured, one under way). A peer that does not know it answers UNKNOWN_MESSAGE.
 * It writes to the backup store and takes the node's disk and network: members only.
 */
public final class Snapshot extends PeerMessage {

    public static final byte TYPE = 0x1C;

    Snapshot() {
        super(TYPE, Trust.MEMBERS);
    }

    /** Done once the snapshot is taken (it uploads afterwards); range work. */
    public static PeerCall<Boolean> request(String backup) {
        return PeerCall.rangeWork((allocator, id) -> {
            byte[] text = backup.getBytes(StandardCharsets.UTF_8);
            ByteBuf frame = Wire.begin(allocator, TYPE, id, text.length);
            frame.writeBytes(text);
            return Wire.seal(frame);
        }, PeerCall::done);
    }

    @Override
    public void serve(Exchange exchange, int id, ByteBuf payload, Trust.Decision decision) {
        String backup = Wire.readText(payload);
        exchange.onStorage(id, () -> exchange.service().snapshot(exchange.peerName(), backup)
                .map(refusal -> Answer.error(id, Wire.ErrorCode.BAD_REQUEST, refusal))
                .orElse(Answer.done(id)));
    }
}
