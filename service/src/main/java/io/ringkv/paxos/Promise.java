package io.ringkv.paxos;

import java.nio.ByteBuffer;
import java.util.Optional;

import io.ringkv.record.Record;

/**
 * A replica's answer to a prepare: whether it promised the ballot, its consensus state for the
 * key (the higher promise when it refused), and the key's record in its store. The record comes
 * with the promise so that a conditional write costs no separate read: the coordinator checks the
 * condition against the newest record of the replicas that promised (see {@link Promises}).
 *
 * @param current the replica's newest record of the key, tombstones included; null for none
 */
public record Promise(boolean granted, PaxosState state, Record current) {

    public Optional<Record> currentIfAny() {
        return Optional.ofNullable(current);
    }

    public byte[] toBytes() {
        ByteBuffer buffer = ByteBuffer.allocate(size()).put(Codec.FORMAT_V1).put((byte) (granted ? 1 : 0));
        state.write(buffer);
        buffer.put((byte) (current == null ? 0 : 1));
        if (current != null) {
            Proposal.writeRecord(buffer, current);
        }
        return buffer.array();
    }

    private int size() {
        return 1 + 1 + state.encodedSize() + 1 + (current == null ? 0 : Integer.BYTES + current.encoded().length);
    }

    /** @throws IllegalArgumentException when the bytes are not a promise of a known format (a peer's answer is input) */
    public static Promise fromBytes(byte[] bytes, int maxRecordLength) {
        return Codec.decode(bytes, "a promise", buffer -> {
            boolean granted = Codec.flag(buffer);
            PaxosState state = PaxosState.read(buffer, maxRecordLength);
            Record current = Codec.flag(buffer) ? Proposal.readRecord(buffer, maxRecordLength) : null;
            return new Promise(granted, state, current);
        });
    }
}
