package io.ringkv.peer.message;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.ringkv.paxos.Ballot;
import io.ringkv.paxos.Proposal;
import io.ringkv.peer.wire.Wire;

/**
 * PAXOS_ACCEPT: key, proposal ({@link Proposal}'s binary form): accept it unless a higher
 * ballot was promised. Answer: PROMISED, the ballot promised after (the proposal's once
 * accepted). Since version 2 with conditional requests. Changes state: members only.
 */
public final class PaxosAccept extends PeerMessage {

    public static final byte TYPE = 0x1E;
    public static final byte PROMISED = 0x29;

    PaxosAccept() {
        super(TYPE, Trust.MEMBERS);
    }

    public static PeerCall<Ballot> request(byte[] key, Proposal proposal) {
        return PeerCall.point((allocator, id) -> {
            byte[] encoded = proposal.toBytes();
            ByteBuf frame = Wire.begin(allocator, TYPE, id, 2 + key.length + encoded.length);
            Wire.writeKey(frame, key);
            frame.writeBytes(encoded);
            return Wire.seal(frame);
        }, (type, payload, limits) -> {
            if (type != PROMISED) {
                throw PeerCall.unexpected(type);
            }
            return PaxosMessages.readBallot(payload);
        });
    }

    @Override
    public void serve(Exchange exchange, int id, ByteBuf payload, Trust.Decision decision) {
        byte[] key = Wire.readKey(payload, exchange.limits().maxKeyLength());
        byte[] encoded = PaxosMessages.rest(payload);
        Proposal proposal = PaxosMessages.decoded(() -> Proposal.fromBytes(encoded, exchange.limits().maxRecordLength()));
        exchange.onStorage(id, () -> {
            Ballot promised = exchange.service().acceptor().accept(key, proposal);
            return allocator -> Wire.seal(PaxosMessages.writeBallot(Wire.begin(allocator, PROMISED, id, 16), promised));
        });
    }
}
