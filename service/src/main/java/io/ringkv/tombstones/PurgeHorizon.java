package io.ringkv.tombstones;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.ringkv.ledger.RepairLedger;
import io.ringkv.record.HybridClock;
import io.ringkv.ring.ClusterMembership;
import io.ringkv.ring.HashRing;

/**
 * Up to where this node may purge tombstones: a tombstone goes only once every member that may
 * have missed the delete has been repaired with this node after it. The repairs are anti-entropy's
 * ({@link RepairLedger}); this class says what they allow, and remembers the answer as this node's
 * purge horizon, which its peers check ({@link PurgeHorizonCheck}).
 *
 * <p>A peer that went off the ring without handing its data over (down, or gone from DNS) still
 * holds purges back for a grace period after it went; then it is forgotten. One that left (it
 * pushed what it held to the next owners) is forgotten at once.
 */
public final class PurgeHorizon {

    private static final Logger log = LoggerFactory.getLogger(PurgeHorizon.class);

    private final ClusterMembership membership;
    private final RepairLedger ledger;
    private final LongSupplier clock;
    /** Peers that went off the ring without handing their data over, and since when. */
    private final Map<String, Long> absentSince = new ConcurrentHashMap<>();

    /** @param clock wall-clock milliseconds, which the grace period is measured in */
    public PurgeHorizon(ClusterMembership membership, RepairLedger ledger, LongSupplier clock) {
        this.membership = membership;
        this.ledger = ledger;
        this.clock = clock;
        membership.onDeparture((member, lastState) -> {
            if (lastState.departing()) {
                // It pushed what it held to the next owners before it went.
                forget(member);
            } else {
                absentSince.putIfAbsent(member, clock.getAsLong());
            }
        });
        membership.onChange(view -> absentSince.keySet().removeAll(view.ring().names()));
    }

    /**
     * The timestamp below which tombstones may be purged: older than the grace period, and older
     * than the last repair with every member (0 while one never had one), and with every peer that
     * went off the ring without handing its data over, for a grace period after it went.
     * Remembered as this node's purge horizon, which its peers check ({@link PurgeHorizonCheck}).
     */
    public long cutoff(long graceCutoffMillis) {
        if (!membership.isKnown() || !membership.state(membership.self()).holdsData()) {
            // Before discovery its ring is itself alone; joining, it pulls what the owners hold now: neither purges.
            return 0;
        }
        // Every member, joining ones and those that share no range with it too (repairs with them
        // are empty, and as regular): the horizon its peers check is then never past the start
        // of a repair with any member it knows (PurgeHorizonCheck).
        HashRing ring = membership.ring();
        List<String> members = ring.names();
        long cutoff = graceCutoffMillis;
        for (String peer : members) {
            if (!peer.equals(membership.self())) {
                cutoff = Math.min(cutoff, ledger.lastRepairMillis(peer));
            }
        }
        for (String peer : ledger.lastRepairs().keySet()) {
            if (members.contains(peer)) {
                continue;
            }
            long since = absentSince.computeIfAbsent(peer, ignored -> clock.getAsLong());
            if (since > graceCutoffMillis) {
                // Off the ring without handing its data over (down, or gone from DNS): its deletes wait for it.
                cutoff = Math.min(cutoff, ledger.lastRepairMillis(peer));
            } else {
                log.warn("{} has been off the ring for longer than the tombstone grace period without handing its data over:"
                        + " tombstones are purged without it from now on; if it comes back on its old store, it finds that"
                        + " store behind its peers' purges and starts empty", peer);
                forget(peer);
            }
        }
        long timestamp = HybridClock.timestampAt(Math.max(0, cutoff));
        ledger.purgedBefore(timestamp);
        return timestamp;
    }

    /** A peer gone for good: nothing waits for it any more. */
    private void forget(String peer) {
        ledger.forget(peer);
        absentSince.remove(peer);
    }
}
