package io.ringkv.peer.message;

/**
 * Who may send a message: every unit of {@link PeerMessages} names its rule, so none is served
 * by default. Every caller has proved the cluster secret in the handshake (and, with TLS, that its
 * certificate is for the name it claims); what differs is whether its name is on this node's ring
 * (a member now, or one joining or leaving: with a StatefulSet's intent every pod it is meant to
 * have is on the ring from the first round, before it ever answers).
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
public enum Trust {

    /** Changes this node's state: served to members only, refused to anyone else. */
    MEMBERS(Decision.REFUSE),
    /** Reads, or steers a read under way: served to any caller that proved the cluster secret. */
    SECRET(Decision.SERVE),
    /** Answered to any caller that proved the secret; what it tells is heard from members only. */
    SECRET_HEARD_FROM_MEMBERS(Decision.ANSWER_ONLY);

    /** What this node does with one request. */
    public enum Decision {
        /** Served as asked. */
        SERVE,
        /** Answered, but what the caller told about itself is not heard. */
        ANSWER_ONLY,
        /** Refused with an error. */
        REFUSE
    }

    private final Decision forNonMembers;

    Trust(Decision forNonMembers) {
        this.forNonMembers = forNonMembers;
    }

    /** What to do with a request under this rule from a caller on this node's ring ({@code member}) or not. */
    public Decision decide(boolean member) {
        return member ? Decision.SERVE : forNonMembers;
    }
}
