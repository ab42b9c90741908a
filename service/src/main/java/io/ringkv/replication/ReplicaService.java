package io.ringkv.replication;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

import io.ringkv.ledger.RepairLedger;
import io.ringkv.overload.Throttle;
import io.ringkv.paxos.Acceptor;
import io.ringkv.peer.message.PeerService;
import io.ringkv.peer.wire.PeerStatus;
import io.ringkv.record.HybridClock;
import io.ringkv.record.Record;
import io.ringkv.ring.ClusterMembership;
import io.ringkv.ring.HashRing;
import io.ringkv.ring.TokenIntervalSet;
import io.ringkv.storage.RecordCursor;
import io.ringkv.storage.RocksStore;
import io.ringkv.storage.StorageException;
import io.ringkv.storage.TokenIndex;
import io.ringkv.tombstones.PurgeHorizonCheck;

/**
 * The replica side of replication: what this node does when a coordinator elsewhere reads or
 * writes one of its keys, or streams its records for a range. Writes carry the coordinator's
 * timestamp; this node's clock observes it, so that its own later writes order after it.
 */
public final class ReplicaService implements PeerService {

    /** A peer's pull of at least this share of the store's keys reads the whole store in one scan. */
    static final int SCAN_ALL_SHARE = 8;

    private final String name;
    private final RocksStore store;
    private final TokenIndex tokens;
    private final HybridClock clock;
    private final ClusterMembership membership;
    private final RepairLedger ledger;
    private final Throttle transfers;
    private final PurgeHorizonCheck purgeCheck;
    private final Snapshots snapshots;
    private final PeerEvents events;
    private final Acceptor acceptor;

    /**
     * @param purgeCheck while it finds this store behind its peers' purges, the store hands nothing
     *                   out: reads, digests and range streams fail (a storage error, which the caller
     *                   counts against this node). Its peers then take it as JOINING and ask it for
     *                   nothing; should one ask anyway, it must not hand back deleted values. It
     *                   also hears what each peer tells in its PING.
     * @param events     where what peers tell in their own calls goes ({@link ReplicaDirectory} hears it)
     * @param acceptor   this node's side of conditional requests, which reads the store like a read
     */
    public ReplicaService(String name, RocksStore store, HybridClock clock, ClusterMembership membership,
            RepairLedger ledger, Throttle transfers, PurgeHorizonCheck purgeCheck, Snapshots snapshots, PeerEvents events,
            Acceptor acceptor) {
        this.name = name;
        this.store = store;
        this.tokens = new TokenIndex(store);
        this.clock = clock;
        this.membership = membership;
        this.ledger = ledger;
        this.transfers = transfers;
        this.purgeCheck = purgeCheck;
        this.snapshots = snapshots;
        this.events = events;
        this.acceptor = acceptor;
    }

    @Override
    public String name() {
        return name;
    }

    private void requireNotWithheld() {
        if (purgeCheck.fellBehind()) {
            throw new StorageException(name + "'s store fell behind its peers' tombstone purges: it hands nothing out"
                    + " until the node restarts and clears it");
        }
    }

    @Override
    public Optional<Record> read(byte[] key) {
        requireNotWithheld();
        return store.get(key);
    }

    /** Not in memory while withheld: the read then goes to {@link #read}, which fails. */
    @Override
    public RocksStore.Lookup readIfCached(byte[] key) {
        return purgeCheck.fellBehind() ? RocksStore.Lookup.NOT_CACHED : store.getIfCached(key);
    }

    /** Refused (the clock counts it) when the record is stamped further ahead of this clock than it may be. */
    @Override
    public CompletableFuture<?> write(byte[] key, Record record) {
        if (!clock.observe(record.timestamp())) {
            return CompletableFuture.failedFuture(new ClockSkewException(record.timestamp()));
        }
        return store.apply(key, record);
    }

    @Override
    public Optional<String> snapshot(String peer, String backup) {
        return snapshots.take(backup);
    }

    /** What a peer tells about itself as it pings this node is heard before the answer is made. */
    @Override
    public PeerStatus status(String peer, PeerStatus caller) {
        events.publish(new PeerEvents.StatusInPing(peer, caller));
        purgeCheck.observe(peer, caller);
        return ledger.statusFor(peer, membership.state(name)).withAttributes(membership.selfMember().attributes());
    }

    /** A peer connected to this node or pinged it, on the event loop. */
    @Override
    public void heardFrom(String peer, int clusterPort) {
        events.publish(new PeerEvents.SignOfLife(peer, clusterPort));
    }

    @Override
    public boolean repaired(String peer, long startedMillis) {
        if (!clock.acceptsMillis(startedMillis)) {
            return false;
        }
        ledger.repaired(peer, startedMillis);
        return true;
    }

    @Override
    public boolean isMember(String peer) {
        return membership.ring().names().contains(peer);
    }

    @Override
    public long[] digest(long[] intervals) {
        requireNotWithheld();
        return tokens.digests(intervals);
    }

    @Override
    public RecordCursor openTokenRange(long low, long high) {
        requireNotWithheld();
        return tokens.openTokenRange(low, high);
    }

    /**
     * One scan of every record, filtered by token, when the intervals hold at least
     * 1/{@value #SCAN_ALL_SHARE} of this store's keys (a rebuilt node's share: a sequential read of
     * the store); else the token index's keys in the intervals, each read by its key (a few ranges
     * of a large store, where reading everything would cost more). In the profile of a rebuild the
     * point reads cost the sender several times what scanning a record does.
     */
    @Override
    public RecordCursor openTokenIntervals(TokenIntervalSet intervals) {
        requireNotWithheld();
        long held = store.longProperty("rocksdb.estimate-num-keys");
        if (tokens.holdsAtLeast(intervals.bounds(), held / SCAN_ALL_SHARE)) {
            return store.openRange(new byte[0], null, key -> intervals.contains(HashRing.token(key)));
        }
        return tokens.openRecords(intervals.bounds());
    }

    @Override
    public RecordCursor openRange(byte[] start, byte[] end) {
        requireNotWithheld();
        return store.openRange(start, end);
    }

    /** Withheld like reads: a promise carries the key's record. */
    @Override
    public Acceptor acceptor() {
        requireNotWithheld();
        return acceptor;
    }

    @Override
    public Duration paceTransfer(long bytes) {
        return transfers.reserve(bytes);
    }
}
