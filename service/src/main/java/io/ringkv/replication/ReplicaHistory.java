package io.ringkv.replication;

import io.ringkv.peer.wire.PeerStatus;
import io.ringkv.ring.MemberState;

/**
 * What a replica remembers of its convergence with its peers, as far as the replica side needs
 * it: peers tell it when they finished a repair with it, and it tells them how far it has purged
 * tombstones and when its last repair with them started ({@code repair.RepairLedger} keeps both).
 */
public interface ReplicaHistory {

    /** For a node that repairs nothing and purges nothing: tests, and a node without peers. */
    ReplicaHistory NONE = new ReplicaHistory() {
        @Override
        public long purgedBefore() {
            return 0;
        }

        @Override
        public void repaired(String peer, long startedMillis) {
        }

        @Override
        public long lastRepairMillis(String peer) {
            return 0;
        }
    };

    /** The highest timestamp below which this node may have purged tombstones. */
    long purgedBefore();

    /** A peer finished a repair with this node that it started at {@code startedMillis}. */
    void repaired(String peer, long startedMillis);

    /** When the last repair with the peer that finished had started; 0 if none (or the peer was forgotten). */
    long lastRepairMillis(String peer);

    /** What this node, in that member state, tells the peer about itself: in its PING, or in its answer to the peer's. */
    default PeerStatus statusFor(String peer, MemberState state) {
        return new PeerStatus(state.ordinal(), purgedBefore(), lastRepairMillis(peer));
    }
}
