package io.ringkv.peer.message;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

import io.ringkv.paxos.Acceptor;
import io.ringkv.peer.wire.PeerStatus;
import io.ringkv.record.Record;
import io.ringkv.ring.TokenIntervalSet;
import io.ringkv.storage.RecordCursor;
import io.ringkv.storage.RocksStore;

/**
 * What this node does for its peers: the replica side of the protocol, which the units of
 * {@link PeerMessages} serve from. {@link #read} and {@link #openRange} block on storage, and are
 * called on the storage scheduler; {@link #readIfCached} and {@link #write} never block, and are
 * called on the event loop.
 */
public interface PeerService {

    /** This node's name on the ring, which the handshake tells every peer. */
    String name();

    /** The newest record this replica holds for the key, tombstones included. Blocking. */
    Optional<Record> read(byte[] key);

    /** The same, if it needs no disk read; else not {@link RocksStore.Lookup#known()}. */
    RocksStore.Lookup readIfCached(byte[] key);

    /** Stores the record unless this replica already holds a newer version of the key; completes once stored. */
    CompletableFuture<?> write(byte[] key, Record record);

    /** This replica's records with {@code start <= key < end} (null end: all), tombstones included. */
    RecordCursor openRange(byte[] start, byte[] end);

    /**
     * What PING's answer tells about this node (its member state and its tombstone purge horizon),
     * once it has heard what the calling peer told about itself ({@link PeerStatus#UNKNOWN} if nothing).
     */
    PeerStatus status(String peer, PeerStatus caller);

    /**
     * A peer proved who it is: it finished the handshake on a new connection, or pinged, telling
     * the port it answers peers on ({@code clusterPort}; 0 when it did not: a handshake, or a peer
     * of an older version). Called on the event loop, before the ping is answered; must not block.
     */
    void heardFrom(String peer, int clusterPort);

    /**
     * A peer finished a repair with this node, which it started at {@code startedMillis}.
     *
     * @return false, recording nothing, when that is later than this node's clock allows (its
     *         maximum offset): a repair time sets how far tombstones may be purged
     */
    boolean repaired(String peer, long startedMillis);

    /**
     * Whether the peer is on this node's ring: a member now, or one joining or leaving. Only a
     * member may change this node's state ({@link Trust}). Called on the event loop; must not block.
     */
    boolean isMember(String peer);

    /** The digests (hash, keys) of the keys in each token interval (low, high, ...). Blocking. */
    long[] digest(long[] intervals);

    /** The keys with a token in {@code [low, high]}, in token order, with their versions only. Blocking. */
    RecordCursor openTokenRange(long low, long high);

    /**
     * The whole records (tombstones included) of the keys with a token in the intervals, in no
     * particular order: what a peer that holds next to none of them pulls in one stream. Blocking.
     */
    RecordCursor openTokenIntervals(TokenIntervalSet intervals);

    /**
     * A member asked this node to take its snapshot for a backup ({@code io.ringkv.backup}) and
     * upload it in the background. Blocking: returns once the snapshot is taken.
     *
     * @return empty once it is taken, else why not (no backup store configured, one under way)
     */
    Optional<String> snapshot(String peer, String backup);

    /** This node as the Paxos acceptor of its keys ({@link PaxosPrepare}, {@link PaxosAccept}, {@link PaxosCommit}). */
    Acceptor acceptor();

    /**
     * How long to hold these bytes of records a peer's transfer (a repair, a join's pull) asked
     * for before sending them: the pace of this node's own background transfers, which its
     * clients' latency sets. The sender paces, as Cassandra's outbound stream throughput does:
     * the peer that pulls has no clients of its own to go by while it rebuilds.
     */
    Duration paceTransfer(long bytes);
}
