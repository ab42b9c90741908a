package io.ringkv.tombstones;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.ringkv.ledger.RepairLedger;
import io.ringkv.peer.wire.PeerStatus;
import io.ringkv.record.HybridClock;
import io.ringkv.ring.ClusterMembership;
import io.ringkv.ring.MemberState;

/**
 * Keeps a store that fell behind its peers' tombstone purges from serving, with DNS discovery.
 *
 * <p>A peer purges a tombstone only after a repair with every member of its ring, and, for a
 * grace period, with every member that went off its ring without handing its data over
 * ({@link PurgeHorizon}). A pod gone from DNS for longer (not scaled away: its node was
 * down, its volume kept) is forgotten, and the others purge without it. Back on its old volume, it
 * holds values whose deletes they no longer know of, and read repair or anti-entropy would hand
 * those values back to them. So every PING carries the caller's member state, its purge horizon
 * (the highest timestamp below which it may have purged) and the start of its last repair with
 * the peer, and every answer the same of the peer. While a node knows a peer, its horizon never
 * passes the start of their last repair; past it, the node has forgotten the peer and purged
 * deletes the peer may never have seen, which no repair can tell from live values any more. (A
 * join counts as a repair with each owner it pulled from.)
 *
 * <p>The check runs on every PING either way, before the answer is made and before discovery puts
 * a member (back) on a ring, so a stale store is caught before anything reads from it. The peers
 * make the same decision from their side ({@link #stateToHear}): the inputs are the same, and a
 * node back on its old volume answers a PING from a peer not yet on its own ring (whose horizon it
 * does not hear) with the state it started in. Such a
 * store must not serve again as it is: the node says JOINING at once (peers ask it for no reads,
 * and the PING answer already says so), marks its store as left (cleared at its next start, then
 * it joins like a new node, as a returning volume does) and reports itself broken, so that
 * Kubernetes restarts it. If this node purged without the peer too (each was off the other's ring
 * past the grace period: a long split), neither store can be preferred and clearing both would
 * lose data: that is logged for an operator, and nothing is cleared. Only with DNS discovery: a
 * static peer list never drops a member, so its peers keep every tombstone until it is repaired.
 */
public final class PurgeHorizonCheck {

    private static final Logger log = LoggerFactory.getLogger(PurgeHorizonCheck.class);

    private final ClusterMembership membership;
    private final RepairLedger ledger;
    private final Runnable reportBroken;
    private final boolean enabled;
    /** Set only after the state says JOINING: whoever sees it true also sees that. */
    private volatile boolean fellBehind;
    /** Peers found to have purged without this node while it purged without them: reported once each. */
    private final Set<String> mutual = ConcurrentHashMap.newKeySet();
    /** Peers found behind this store's purges: reported once each time. */
    private final Set<String> stalePeers = ConcurrentHashMap.newKeySet();

    /**
     * @param enabled      with DNS discovery (members come and go)
     * @param reportBroken tells the platform this node must be restarted (its liveness)
     */
    public PurgeHorizonCheck(ClusterMembership membership, RepairLedger ledger, boolean enabled,
            Runnable reportBroken) {
        this.membership = membership;
        this.ledger = ledger;
        this.enabled = enabled;
        this.reportBroken = reportBroken;
    }

    /**
     * Whether a peer may have purged tombstones this node never saw: its horizon (a hybrid
     * timestamp) is past the start of their last repair. Equal is safe: while the peer knows this
     * node, it purges only below the start of a repair it finished with it.
     */
    static boolean missedPurges(long peerPurgedBefore, long lastRepairStartedMillis) {
        return peerPurgedBefore > HybridClock.timestampAt(lastRepairStartedMillis);
    }

    /** Whether this store fell behind a peer's purges: it serves no reads until the node is restarted. */
    public boolean fellBehind() {
        return fellBehind;
    }

    /** Which of two stores that both hold data may have lost deletes the other purged. */
    enum Behind {
        NEITHER, THIS_STORE, PEER_STORE,
        /** Each purged without the other (a split longer than the grace period): left to an operator. */
        EACH;

        static Behind of(long ownPurgedBefore, long peerPurgedBefore, long lastRepairStartedMillis) {
            boolean thisStore = missedPurges(peerPurgedBefore, lastRepairStartedMillis);
            boolean peerStore = missedPurges(ownPurgedBefore, lastRepairStartedMillis);
            return thisStore ? (peerStore ? EACH : THIS_STORE) : (peerStore ? PEER_STORE : NEITHER);
        }
    }

    /**
     * What a peer told about itself, in its PING or its answer to this node's; if this store is
     * behind its purges (and the peer is not behind this store's), stops it from serving again.
     * Cheap: called for every PING.
     */
    public void observe(String peer, PeerStatus status) {
        if (fellBehind) {
            return;
        }
        switch (compare(peer, status)) {
            case THIS_STORE -> fallBehind(peer, status.purgedBefore(), since(peer, status));
            case EACH -> {
                // Either store may bring back the other's deletes, and clearing both would lose data.
                if (mutual.add(peer)) {
                    log.error("this node and {} each purged tombstones without the other (horizons {} here, {} there; last repair"
                            + " between them: {}): either may hand the other values it deleted; nothing is cleared automatically."
                            + " Clear the store of the side whose writes matter less (delete its volume) and restart it",
                            peer, ledger.purgedBefore(), status.purgedBefore(), since(peer, status));
                }
            }
            case NEITHER, PEER_STORE -> {
                // The peer's own check stops a store behind this one's purges (and stateToHear meanwhile).
            }
        }
    }

    /**
     * The state to hear from a peer that told {@code told}: as told, unless it says it holds data
     * while its store is behind this node's purges. It finds that out itself from this node's
     * horizon, with the same inputs, and stops serving; until then (it has not heard this node's
     * horizon yet: a PING from a node not on its ring is answered but not looked at) this node
     * must neither read from it nor repair with it, so it is heard as JOINING.
     */
    public MemberState stateToHear(String peer, PeerStatus status, MemberState told) {
        if (!told.holdsData() || compare(peer, status) != Behind.PEER_STORE) {
            stalePeers.remove(peer); // restarted empty: reported again should it ever fall behind again
            return told;
        }
        if (stalePeers.add(peer)) {
            log.warn("{} says it is {}, but its store is behind this node's purges (horizon {} here; last repair between them: {}):"
                    + " it may hold values whose deletes were purged, so it is taken as JOINING until it restarts empty",
                    peer, told, ledger.purgedBefore(), since(peer, status));
        }
        return MemberState.JOINING;
    }

    /** Which store is behind the other's purges, when both hold data; NEITHER when that cannot be told. */
    private Behind compare(String peer, PeerStatus status) {
        boolean peerHoldsData = MemberState.told(status.state()).map(MemberState::holdsData).orElse(false);
        if (!enabled || !peerHoldsData || status.lastRepairWithReceiver() < 0
                || !membership.state(membership.self()).holdsData()) {
            // A joining node (either side) holds only what the owners held as it pulled, purges
            // included; an older peer does not say what its horizon is measured against.
            return Behind.NEITHER;
        }
        return Behind.of(ledger.purgedBefore(), status.purgedBefore(), lastRepair(peer, status));
    }

    /**
     * The later of the two sides' records of their last repair: a repair whose end one side did
     * not hear of still exchanged everything both held when it started.
     */
    private long lastRepair(String peer, PeerStatus status) {
        return Math.max(ledger.lastRepairMillis(peer), status.lastRepairWithReceiver());
    }

    private String since(String peer, PeerStatus status) {
        long lastRepair = lastRepair(peer, status);
        return lastRepair == 0 ? "never" : lastRepair + " ms, timestamp " + HybridClock.timestampAt(lastRepair);
    }

    /**
     * Stops the store from serving, once. Serialized, and the flag set last: a PING answered on
     * another thread meanwhile must not tell its peer this node is NORMAL (that peer would read
     * from it and repair with it, pulling the deleted values back) because it saw the flag
     * before the state had changed.
     */
    private synchronized void fallBehind(String peer, long peerPurgedBefore, String since) {
        if (fellBehind) {
            return;
        }
        // Marked left first: a join finishing at the same moment then cannot make the store a
        // member's again, and sets JOINING back if it went NORMAL in between (DataMovement).
        var stored = ledger.markLeft();
        membership.setState(membership.self(), MemberState.JOINING);
        fellBehind = true;
        log.error("{} purged tombstones below timestamp {}, past the start of their last repair ({}): it dropped"
                + " deletes this node may not have seen (this node was off its ring), so this store could bring deleted"
                + " values back. The node serves no reads and reports itself broken; restarted, it clears its store and"
                + " joins as a new node", peer, peerPurgedBefore, since);
        // Broken only once the mark is stored: the restart that follows must find it.
        stored.whenComplete((ignored, error) -> {
            if (error != null) {
                log.error("could not mark the store as left: restarted, the node would serve it again", error);
            }
            reportBroken.run();
        });
    }
}
