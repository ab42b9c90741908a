package io.ringkv.paxos;

import java.nio.ByteBuffer;
import java.util.Optional;

import io.ringkv.record.Record;
import io.ringkv.record.RecordCodec;

/**
 * What a coordinator asks the replicas to accept under its ballot: a new version of the key, or
 * nothing (an empty proposal, which a read or a failed condition makes when it must close a round:
 * {@code docs/design.md}, "Conditional writes").
 *
 * @param ballot the round it is proposed in
 * @param origin the ballot it was first proposed under, kept when another coordinator completes
 *               it under its own, so that the coordinator that proposed it can tell that it was
 *               chosen: the proposal's identity
 * @param update the record to store once chosen; null for an empty proposal
 */
public record Proposal(Ballot ballot, Ballot origin, Record update) {

    /** A new proposal, first proposed under this ballot. */
    public static Proposal of(Ballot ballot, Record update) {
        return new Proposal(ballot, ballot, update);
    }

    public static Proposal empty(Ballot ballot) {
        return new Proposal(ballot, ballot, null);
    }

    public boolean isEmpty() {
        return update == null;
    }

    public Optional<Record> updateIfAny() {
        return Optional.ofNullable(update);
    }

    /** The same proposal, made again under a newer ballot by a coordinator that completes it. */
    public Proposal reproposedUnder(Ballot newer) {
        return new Proposal(newer, origin, update);
    }

    /** What committing it records: its ballot and its origin. */
    public Commit commit() {
        return new Commit(ballot, origin);
    }

    /** The binary form a coordinator sends. */
    public byte[] toBytes() {
        ByteBuffer buffer = ByteBuffer.allocate(1 + encodedSize()).put(Codec.FORMAT_V1);
        write(buffer);
        return buffer.array();
    }

    /** @throws IllegalArgumentException when the bytes are not a proposal of a known format (a peer's request is input) */
    public static Proposal fromBytes(byte[] bytes, int maxRecordLength) {
        return Codec.decode(bytes, "a proposal", buffer -> read(buffer, maxRecordLength));
    }

    int encodedSize() {
        return 2 * Ballot.BYTES + 1 + (update == null ? 0 : Integer.BYTES + update.encoded().length);
    }

    void write(ByteBuffer buffer) {
        ballot.write(buffer);
        origin.write(buffer);
        buffer.put((byte) (update == null ? 0 : 1));
        if (update != null) {
            writeRecord(buffer, update);
        }
    }

    static Proposal read(ByteBuffer buffer, int maxRecordLength) {
        Ballot ballot = Ballot.read(buffer);
        Ballot origin = Ballot.read(buffer);
        boolean hasUpdate = Codec.flag(buffer);
        return new Proposal(ballot, origin, hasUpdate ? readRecord(buffer, maxRecordLength) : null);
    }

    static void writeRecord(ByteBuffer buffer, Record record) {
        buffer.putInt(record.encoded().length).put(record.encoded());
    }

    static Record readRecord(ByteBuffer buffer, int maxRecordLength) {
        int length = buffer.getInt();
        if (length < 0 || length > maxRecordLength || length > buffer.remaining()) {
            throw new Codec.MalformedStateException("a record of " + length + " bytes (at most " + maxRecordLength + ")");
        }
        byte[] encoded = new byte[length];
        buffer.get(encoded);
        try {
            return RecordCodec.decode(encoded);
        } catch (RecordCodec.MalformedRecordException e) {
            throw new Codec.MalformedStateException(e.getMessage());
        }
    }
}
