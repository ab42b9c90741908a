package io.ringkv.peer.message;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.ringkv.paxos.Ballot;
import io.ringkv.paxos.Promise;
import io.ringkv.peer.wire.Wire;

/**
 * PAXOS_PREPARE: key, ballot (two longs), then the ballot of the commits to tell since, if any:
 * promise it unless a higher one was. Answer: PROMISE
 * ({@link Promise}'s binary form: granted or not, the key's consensus state, its record).
 * Since version 2 with conditional requests. Changes state (the promise): members only.
 */
public final class PaxosPrepare extends PeerMessage {

    public static final byte TYPE = 0x1D;
    public static final byte PROMISE = 0x28;

    PaxosPrepare() {
        super(TYPE, Trust.MEMBERS);
    }

    /** @param since null for none ({@link io.ringkv.paxos.Acceptor#prepare}) */
    public static PeerCall<Promise> request(byte[] key, Ballot ballot, Ballot since) {
        return PeerCall.point((allocator, id) -> frame(allocator, id, key, ballot, since), (type, payload, limits) -> {
            if (type != PROMISE) {
                throw PeerCall.unexpected(type);
            }
            return Promise.fromBytes(PaxosMessages.rest(payload), limits.maxRecordLength());
        });
    }

    static ByteBuf frame(ByteBufAllocator allocator, int id, byte[] key, Ballot ballot, Ballot since) {
        ByteBuf frame = Wire.begin(allocator, TYPE, id, 2 + key.length + 32);
        Wire.writeKey(frame, key);
        PaxosMessages.writeBallot(frame, ballot);
        if (since != null) {
            PaxosMessages.writeBallot(frame, since);
        }
        return Wire.seal(frame);
    }

    @Override
    public void serve(Exchange exchange, int id, ByteBuf payload, Trust.Decision decision) {
        byte[] key = Wire.readKey(payload, exchange.limits().maxKeyLength());
        Ballot ballot = PaxosMessages.readBallot(payload);
        Ballot since = payload.isReadable() ? PaxosMessages.readBallot(payload) : null;
        exchange.onStorage(id, () -> PaxosMessages.bytes(PROMISE, id, exchange.service().acceptor().prepare(key, ballot, since).toBytes()));
    }
}
