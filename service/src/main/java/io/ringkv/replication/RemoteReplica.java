package io.ringkv.replication;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.ringkv.health.PeerMonitor;
import io.ringkv.peer.client.PeerClient;
import io.ringkv.peer.message.PeerCall;
import io.ringkv.peer.wire.PeerException;
import io.ringkv.peer.wire.PeerStatus;
import io.ringkv.peer.wire.Wire;
import io.ringkv.record.KeyedRecord;
import io.ringkv.record.Record;
import io.ringkv.record.RecordBatch;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A peer's store, reached over the node-to-node protocol ({@link PeerClient}), every call through
 * the peer's circuit breaker ({@link PeerMonitor}), which also times it and learns its latency.
 */
public final class RemoteReplica implements Replica, AutoCloseable {

    private final PeerClient client;
    private final PeerMonitor monitor;
    private final ReplicaWindow window;
    private final AtomicBoolean readmitting = new AtomicBoolean();

    /** @param window bounds the calls this node has in flight to the peer, and their bytes */
    public RemoteReplica(PeerClient client, PeerMonitor monitor, ReplicaWindow window) {
        this.client = client;
        this.monitor = monitor;
        this.window = window;
    }

    @Override
    public String name() {
        return client.peer();
    }

    /** The breaker's view, and, for a peer whose window is full, after every peer that has room: a read asks another. */
    @Override
    public double expectedLatencyMillis() {
        double latency = monitor.expectedLatencyMillis();
        return window.saturated() ? Math.max(latency, ReplicaPreference.NO_ANSWER_SOON) : latency;
    }

    @Override
    public ReplicaWindow window() {
        return window;
    }

    @Override
    public Mono<Optional<Record>> read(byte[] key) {
        return monitor.guard("read", client.read(key));
    }

    @Override
    public Mono<Boolean> write(byte[] key, Record record) {
        return monitor.guard("write", client.write(key, record).thenReturn(true));
    }

    /** Any call of the peer protocol (a conditional request's Paxos messages), through the breaker. */
    public <T> Mono<T> call(String what, PeerCall<T> call) {
        return monitor.guard(what, client.call(call));
    }

    /** A write the peer missed, replayed from its hint: through the breaker, in the window's background lane. */
    public Mono<Boolean> replay(byte[] key, Record record) {
        return window.call(record.valueLength(), ReplicaWindow.Lane.BACKGROUND, () -> write(key, record));
    }

    /**
     * Whether the peer answers and proves it knows the secret, through its breaker (discovery's
     * probe between requests), with what it tells about itself; fails if it does not answer.
     */
    public Mono<PeerStatus> probe(PeerStatus own) {
        return monitor.guard("probe", client.ping(own));
    }

    /**
     * Tells the peer this node's status and learns its own, around the breaker: an exchange of
     * states, which says nothing of the peer's health; fails if it does not answer.
     */
    public Mono<PeerStatus> exchange(PeerStatus own) {
        return client.ping(own);
    }

    /**
     * Pings the peer around its breaker and, if it answers, closes the breaker ({@link PeerMonitor#readmit}):
     * for a peer that showed it is back. At most one at a time; empty while another runs.
     */
    public Mono<PeerStatus> readmit(PeerStatus own) {
        return Mono.defer(() -> {
            if (!readmitting.compareAndSet(false, true)) {
                return Mono.empty();
            }
            return exchange(own)
                    .doOnNext(answer -> monitor.readmit())
                    .doFinally(signal -> readmitting.set(false));
        });
    }

    /** Calls the peer again at once, without a ping back: it just pinged this node, telling where it answers. */
    public void readmitNow() {
        monitor.readmit();
    }

    /** The peer told the port it answers peers on in a ping of its own: it is called there from now on. */
    public void toldClusterPort(int port) {
        client.toldClusterPort(port);
    }

    /** Whether the peer is shunned here (breaker not closed, or its last call failed). */
    public boolean shunned() {
        return monitor.shunned();
    }

    /** Tells the peer that a repair with it, started at that moment, has finished. */
    public Mono<Void> repaired(long startedMillis) {
        return client.repaired(startedMillis);
    }

    /** Asks the peer to take its snapshot for a backup ({@code io.ringkv.backup}); done once it is taken. */
    public Mono<Void> snapshot(String backup) {
        return client.snapshot(backup);
    }

    /** Whether the breaker lets calls through now: background work leaves a peer that is down alone. */
    public boolean isAvailable() {
        return monitor.breakerState() != CircuitBreaker.State.OPEN;
    }

    /**
     * Digests of token intervals; outside the breaker (a long repair is not a sick peer), in the
     * window's background lane, as every repair call: it yields to clients.
     */
    public Mono<long[]> digest(long[] intervals) {
        return window.call(0, ReplicaWindow.Lane.BACKGROUND, () -> client.digest(intervals));
    }

    /** The peer's versions in a token interval; outside the breaker, like every repair stream. */
    public Flux<KeyedRecord> tokenScan(long low, long high) {
        return client.tokenScan(low, high);
    }

    /**
     * The peer's whole records of the keys in token intervals, for a pull of ranges this node
     * holds next to none of; outside the breaker, like every repair stream. A peer that does not
     * know the request fails it with an error {@link #speaksOlderProtocol} recognizes.
     */
    public Flux<KeyedRecord> recordScan(long[] intervals) {
        return client.recordScan(intervals);
    }

    /**
     * The peer's records of the first of the keys (at most {@link RecordBatch#MAX_KEYS}), as many
     * as one batch takes; outside the breaker, like every repair call. A peer of protocol version 1
     * is asked key by key.
     */
    public Mono<RecordBatch> readBatch(List<byte[]> keys) {
        return window.call(0, ReplicaWindow.Lane.BACKGROUND, () -> client.readBatch(keys))
                .onErrorResume(RemoteReplica::speaksOlderProtocol, older -> Flux.fromIterable(keys)
                        .concatMap(key -> window.call(0, ReplicaWindow.Lane.BACKGROUND, () -> client.read(key))
                                .map(found -> found.map(record -> new KeyedRecord(key, record))))
                        .filter(Optional::isPresent)
                        .map(Optional::get)
                        .collectList()
                        .map(found -> new RecordBatch(keys.size(), found)));
    }

    /** Stores the records on the peer in one call; outside the breaker. A peer of protocol version 1 gets them one by one. */
    @Override
    public Mono<Void> writeBatch(List<KeyedRecord> records) {
        return window.call(RecordBatch.valueBytes(records), ReplicaWindow.Lane.BACKGROUND, () -> client.writeBatch(records))
                .onErrorResume(RemoteReplica::speaksOlderProtocol, older -> Flux.fromIterable(records)
                        .concatMap(keyed -> window.call(keyed.record().valueLength(), ReplicaWindow.Lane.BACKGROUND,
                                () -> client.write(keyed.key(), keyed.record())))
                        .then());
    }

    /** A peer that does not know a message type speaks an older protocol version. */
    public static boolean speaksOlderProtocol(Throwable error) {
        return error instanceof PeerException.Remote remote && remote.code() == Wire.ErrorCode.UNKNOWN_MESSAGE;
    }

    /**
     * Tells the peer this node is up, around the breaker: a ping, which also opens a connection. A
     * peer that shunned this node (it was down) readmits it on it ({@link ReplicaDirectory#heardFrom}).
     *
     * @return whether the peer answered
     */
    public Mono<Boolean> greet() {
        return client.ping(PeerStatus.UNKNOWN).thenReturn(true).onErrorReturn(false);
    }

    /**
     * Exercises the peer's request path without telling the breaker: reads the key and writes it
     * an ancient tombstone (timestamp 1: older than anything a coordinator writes, so it changes
     * nothing a client sees, and the next purge drops it). Fails as the calls fail.
     */
    public Mono<Void> warmUp(byte[] key) {
        return client.read(key).then(client.write(key, Record.tombstone(1)));
    }

    @Override
    public Flux<KeyedRecord> scan(byte[] start, byte[] end) {
        return monitor.guardStream(client.scan(start, end));
    }

    @Override
    public void close() {
        client.close();
    }

    @Override
    public String toString() {
        return "RemoteReplica[" + name() + "]";
    }
}
