package io.ringkv.peer.server;

import io.ringkv.peer.wire.Wire;

/**
 * What a peer that proved the cluster secret may ask of this node, by whether its name is on this
 * node's ring (a member now, or one joining or leaving: with a StatefulSet's intent every pod it
 * is meant to have is on the ring from the first round, before it ever answers).
 *
 * <p>Knowing the secret lets a peer read, as a repair or a join does: reads change nothing. What
 * changes this node's state needs a member: a write (a replica's write, a hint delivered, data
 * handed over), a REPAIRED (the repair ledger, and through it the tombstone purge cutoff), and
 * the state and purge horizon a PING tells (a horizon past the last repair marks the store left),
 * and a SNAPSHOT (it writes to the backup store and takes the node's disk and network).
 * A PING from a name not on the ring is still answered, as a sign of life: a pod that a scale-up
 * just started pings the others before their next discovery round puts it on their rings; what
 * it told is not heard. Plain Java.
 */
final class PeerTrust {

    enum Decision {
        /** Served as asked. */
        SERVE,
        /** A PING answered, but what the caller told about itself is not heard. */
        ANSWER_ONLY,
        /** Refused with an error: it would change this node's state. */
        REFUSE
    }

    private PeerTrust() {
    }

    static Decision decide(byte type, boolean member) {
        if (member) {
            return Decision.SERVE;
        }
        return switch (type) {
            case Wire.PING -> Decision.ANSWER_ONLY;
            case Wire.WRITE, Wire.WRITE_BATCH, Wire.REPAIRED, Wire.SNAPSHOT -> Decision.REFUSE;
            default -> Decision.SERVE;
        };
    }
}
