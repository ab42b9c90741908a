package io.ringkv.peer.client;

import java.net.InetSocketAddress;
import java.net.URI;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import io.ringkv.peer.message.Digest;
import io.ringkv.peer.message.PeerCall;
import io.ringkv.peer.message.Ping;
import io.ringkv.peer.message.RangeRequest;
import io.ringkv.peer.message.Read;
import io.ringkv.peer.message.ReadBatch;
import io.ringkv.peer.message.RecordScan;
import io.ringkv.peer.message.Repaired;
import io.ringkv.peer.message.Scan;
import io.ringkv.peer.message.Snapshot;
import io.ringkv.peer.message.TokenScan;
import io.ringkv.peer.message.Write;
import io.ringkv.peer.message.WriteBatch;
import io.ringkv.peer.wire.PeerException;
import io.ringkv.peer.wire.PeerStatus;
import io.ringkv.record.KeyedRecord;
import io.ringkv.record.Record;
import io.ringkv.record.RecordBatch;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Calls one peer over a small, fixed number of persistent connections, opened on first use and
 * again whenever one closes. Many requests share each connection at once. A request goes on the
 * connection of the caller's own event loop when there is one (no thread hop), otherwise on the
 * next in turn.
 */
public final class PeerClient implements AutoCloseable {

    private final String peer;
    /** Where to connect instead of the name's host and advertised port; null: there. */
    private final InetSocketAddress address;
    private final PeerConnector connector;
    private final Slot[] slots;
    private final AtomicInteger turn = new AtomicInteger();
    private volatile Integer port;
    /** How often the peer has told a port other than the one known: a slot's attempt begun before is not shared. */
    private final AtomicInteger portsTold = new AtomicInteger();
    private volatile boolean closed;

    /** A client of the peer, found by its name's host and the cluster port it tells. */
    public PeerClient(String peer, PeerConnector connector) {
        this(peer, null, connector);
    }

    /**
     * A client of the peer at a fixed address instead: where its name does not resolve, or its port
     * is mapped elsewhere (Docker, a proxy). The handshake still checks that the peer is who it should be.
     */
    public PeerClient(String peer, InetSocketAddress address, PeerConnector connector) {
        this.peer = peer;
        this.address = address;
        this.connector = connector;
        this.slots = new Slot[connector.settings().connectionsPerPeer()];
        for (int i = 0; i < slots.length; i++) {
            slots[i] = new Slot();
        }
    }

    public String peer() {
        return peer;
    }

    /**
     * Sends a request its unit made ({@code io.ringkv.peer.message}) and reads its answer: any
     * message, without a method of its own here. Every call ends: a request has its deadline on
     * its connection, connecting has its own.
     */
    public <T> Mono<T> call(PeerCall<T> call) {
        return connection().flatMap(connection -> connection.call(call));
    }

    /** Opens a range stream its unit made; its flow control bounds it once open, connecting has the timeout. */
    public Flux<KeyedRecord> stream(RangeRequest request) {
        return connection()
                .timeout(connector.settings().timeout(), Mono.error(() -> new PeerException.Unavailable(peer, "no connection within " + connector.settings().timeout())))
                .flatMapMany(connection -> connection.stream(request));
    }

    /** The peer's newest record for the key, tombstones included; empty if it has none. */
    public Mono<Optional<Record>> read(byte[] key) {
        return call(Read.request(key));
    }

    /** Stores the record on the peer unless it holds a newer version. */
    public Mono<Void> write(byte[] key, Record record) {
        return call(Write.request(key, record)).then();
    }

    /** Stores the records on the peer, each unless it holds a newer version, in one frame ({@link RecordBatch#MAX_BYTES}). */
    public Mono<Void> writeBatch(List<KeyedRecord> records) {
        return call(WriteBatch.request(records)).then();
    }

    /** The peer's records of the first of the keys (at most {@link RecordBatch#MAX_KEYS}); it says how many it covers. */
    public Mono<RecordBatch> readBatch(List<byte[]> keys) {
        return call(ReadBatch.request(keys));
    }

    /**
     * Completes when the peer answers, proving it is up and knows the secret, with what it tells
     * about itself; tells it this node's own ({@link PeerStatus#UNKNOWN}: nothing to check) and cluster port.
     */
    public Mono<PeerStatus> ping(PeerStatus own) {
        return call(Ping.request(own, connector.settings().clusterPort()));
    }

    /** Tells the peer that a repair with it, started at that moment, has finished. */
    public Mono<Void> repaired(long startedMillis) {
        return call(Repaired.request(startedMillis)).then();
    }

    /** Asks the peer to take its snapshot for a backup; done once it is taken (it uploads afterwards). */
    public Mono<Void> snapshot(String backup) {
        return call(Snapshot.request(backup)).then();
    }

    /** The peer's digests (hash, keys, hash, keys, ...) of token intervals (low, high, low, high, ...). */
    public Mono<long[]> digest(long[] intervals) {
        return call(Digest.request(intervals));
    }

    /** The peer's keys with a token in {@code [low, high]}, in token order, with their versions only. */
    public Flux<KeyedRecord> tokenScan(long low, long high) {
        return stream(TokenScan.request(low, high));
    }

    /**
     * The peer's whole records (tombstones included) of the keys with a token in the intervals
     * (low, high, ...), in no particular order, at the peer's transfer pace.
     */
    public Flux<KeyedRecord> recordScan(long[] intervals) {
        return stream(RecordScan.request(intervals));
    }

    /** The peer's records in {@code [start, end)} (null end: all), tombstones included, in key order. */
    public Flux<KeyedRecord> scan(byte[] start, byte[] end) {
        return stream(Scan.request(start, end));
    }

    private Mono<PeerConnection> connection() {
        if (closed) {
            return Mono.error(new PeerException.Unavailable(peer, "this node no longer calls it"));
        }
        Slot slot = pick();
        PeerConnection current = slot.connection;
        return current != null && current.isOpen() ? Mono.just(current) : slot.connect();
    }

    private Slot pick() {
        for (Slot slot : slots) {
            PeerConnection connection = slot.connection;
            if (connection != null && connection.isOnCurrentEventLoop() && connection.isOpen()) {
                return slot;
            }
        }
        return slots[Math.floorMod(turn.getAndIncrement(), slots.length)];
    }

    /**
     * The peer told its cluster port in a ping of its own (0: it did not): it is called there from
     * now on. A port other than the one this client knew means the peer restarted: its connections
     * to the old port reach a process that is gone, however open they look (a peer that vanished
     * without closing them), so they are closed rather than left to fail the next requests.
     */
    public void toldClusterPort(int told) {
        if (told <= 0 || address != null) {
            return;
        }
        Integer known = port;
        port = told;
        if (known == null || known != told) {
            portsTold.incrementAndGet();
            for (Slot slot : slots) {
                slot.closeUnless(told);
            }
        }
    }

    /**
     * A new connection: at the fixed address if there is one, else at the port the peer told last
     * time; if that fails the peer may have restarted on another port: the one it told meanwhile
     * (its ping), else it is asked again at once.
     */
    private Mono<PeerConnection> open() {
        if (address != null) {
            return connector.connect(peer, address.getHostString(), address.getPort());
        }
        String host = URI.create(peer).getHost();
        Mono<PeerConnection> askFirst = connector.clusterPort(peer)
                .doOnNext(found -> port = found)
                .flatMap(found -> connector.connect(peer, host, found))
                .doOnError(error -> port = null);
        Integer known = port;
        return known == null ? askFirst : connector.connect(peer, host, known).onErrorResume(error -> {
            Integer told = port;
            return told != null && !told.equals(known) ? connector.connect(peer, host, told).onErrorResume(again -> askFirst) : askFirst;
        });
    }

    /** One connection and the attempt to open it, shared by the callers that arrive meanwhile. */
    private final class Slot {
        private volatile PeerConnection connection;
        private Mono<PeerConnection> connecting;
        /** {@link #portsTold} when that attempt began. */
        private int connectingAfter;

        synchronized Mono<PeerConnection> connect() {
            PeerConnection current = connection;
            if (current != null && current.isOpen()) {
                return Mono.just(current);
            }
            int told = portsTold.get();
            // An attempt begun before the peer told a new port (it restarted) may hang on whatever
            // took the old one until its timeout: callers from now on go to the new one.
            if (connecting == null || connectingAfter != told) {
                connectingAfter = told;
                connecting = attempt();
            }
            return connecting;
        }

        private Mono<PeerConnection> attempt() {
            AtomicReference<Mono<PeerConnection>> self = new AtomicReference<>();
            Mono<PeerConnection> attempt = open()
                    .map(this::adopt)
                    .doFinally(signal -> {
                        synchronized (this) {
                            if (connecting == self.get()) {
                                connecting = null;
                            }
                        }
                    })
                    .cache();
            self.set(attempt);
            return attempt;
        }

        /** The slot's connection from now on, unless another attempt has opened one meanwhile: then that one. */
        private synchronized PeerConnection adopt(PeerConnection opened) {
            PeerConnection current = connection;
            if (current != null && current != opened && current.isOpen()) {
                opened.close();
                return current;
            }
            connection = opened;
            if (closed) {
                opened.close();
            }
            return opened;
        }

        void close() {
            PeerConnection current = connection;
            if (current != null) {
                current.close();
            }
        }

        /** Closes its connection if it reached another port than this one. */
        void closeUnless(int port) {
            PeerConnection current = connection;
            if (current != null && current.remotePort() != port) {
                current.close();
            }
        }
    }

    @Override
    public void close() {
        closed = true;
        for (Slot slot : slots) {
            slot.close();
        }
    }

    @Override
    public String toString() {
        return "PeerClient[" + peer + "]";
    }
}
