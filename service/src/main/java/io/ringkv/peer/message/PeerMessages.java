package io.ringkv.peer.message;

import java.util.List;
import java.util.Optional;

/**
 * Every request of the node-to-node protocol, in one table: the server serves what is here, by
 * type byte, and answers anything else as an unknown message. A new message is a unit of its own
 * and its line here.
 */
public final class PeerMessages {

    public static final List<PeerMessage> ALL = List.of(
            new Read(),
            new Write(),
            new Scan(),
            new Credit(),
            new Cancel(),
            new Ping(),
            new Digest(),
            new TokenScan(),
            new Repaired(),
            new WriteBatch(),
            new ReadBatch(),
            new RecordScan(),
            new Snapshot(),
            new PaxosPrepare(),
            new PaxosAccept(),
            new PaxosCommit());

    /** The units by type byte (unsigned). */
    private static final PeerMessage[] BY_TYPE = index(ALL);

    private PeerMessages() {
    }

    /** The unit of this type byte; empty for one this node does not know. */
    public static Optional<PeerMessage> of(byte type) {
        return Optional.ofNullable(BY_TYPE[Byte.toUnsignedInt(type)]);
    }

    private static PeerMessage[] index(List<PeerMessage> messages) {
        PeerMessage[] byType = new PeerMessage[256];
        for (PeerMessage message : messages) {
            int type = Byte.toUnsignedInt(message.type());
            if (byType[type] != null) {
                throw new IllegalStateException(message + " has the type byte of " + byType[type]);
            }
            byType[type] = message;
        }
        return byType;
    }
}
