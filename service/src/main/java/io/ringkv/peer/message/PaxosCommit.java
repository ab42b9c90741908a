package io.ringkv.peer.message;

import io.netty.buffer.ByteBuf;
import io.ringkv.paxos.Ballot;
import io.ringkv.paxos.Commit;
import io.ringkv.peer.wire.Wire;
import io.ringkv.record.Record;

/**
 * PAXOS_COMMIT: key, the commit's ballot and origin (two ballots), then the record to store, if
 * any, as the rest. Answer: DONE once the record and the commit are stored. Since version 2 with
 * conditional requests. Changes state: members only.
 */
public final class PaxosCommit extends PeerMessage {

    public static final byte TYPE = 0x1F;

    PaxosCommit() {
        super(TYPE, Trust.MEMBERS);
    }

    /** @param record what to store, null for nothing */
    public static PeerCall<Boolean> request(byte[] key, Commit commit, Record record) {
        return PeerCall.point((allocator, id) -> {
            int recordLength = record == null ? 0 : record.encoded().length;
            ByteBuf frame = Wire.begin(allocator, TYPE, id, 2 + key.length + 32 + recordLength);
            Wire.writeKey(frame, key);
            PaxosMessages.writeBallot(frame, commit.ballot());
            PaxosMessages.writeBallot(frame, commit.origin());
            if (record != null) {
                frame.writeBytes(record.encoded());
            }
            return Wire.seal(frame);
        }, PeerCall::done);
    }

    @Override
    public void serve(Exchange exchange, int id, ByteBuf payload, Trust.Decision decision) {
        byte[] key = Wire.readKey(payload, exchange.limits().maxKeyLength());
        Ballot ballot = PaxosMessages.readBallot(payload);
        Commit commit = new Commit(ballot, PaxosMessages.readBallot(payload));
        Record record = payload.isReadable() ? Wire.readRecord(payload, exchange.limits().maxRecordLength()) : null;
        exchange.onStorage(id, () -> {
            exchange.service().acceptor().commit(key, commit, record);
            return Answer.done(id);
        });
    }
}
