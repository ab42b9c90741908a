package io.ringkv.conditional;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;

import io.ringkv.paxos.Acceptor;
import io.ringkv.paxos.Ballot;
import io.ringkv.paxos.Commit;
import io.ringkv.paxos.Promise;
import io.ringkv.paxos.Proposal;
import io.ringkv.peer.message.PaxosAccept;
import io.ringkv.peer.message.PaxosCommit;
import io.ringkv.peer.message.PaxosPrepare;
import io.ringkv.peer.message.PeerCall;
import io.ringkv.record.Record;
import io.ringkv.replication.RemoteReplica;
import io.ringkv.replication.Replica;
import io.ringkv.storage.RocksStore;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * A key's replicas as Paxos acceptors: this node's own {@link Acceptor} on the storage scheduler,
 * a peer's through its connection and circuit breaker.
 */
final class PaxosReplicas {

    private final Acceptor local;
    private final Scheduler storageScheduler;

    PaxosReplicas(Acceptor local, Scheduler storageScheduler) {
        this.local = local;
        this.storageScheduler = storageScheduler;
    }

    /** The key's record in this node's store, if this node is one of the replicas and the record is in memory. */
    Optional<Record> heldHereIfCached(List<Replica> replicas, byte[] key) {
        if (replicas.stream().allMatch(replica -> replica instanceof RemoteReplica)) {
            return Optional.empty();
        }
        RocksStore.Lookup lookup = local.currentIfCached(key);
        return lookup.known() ? lookup.found() : Optional.empty();
    }

    Mono<Promise> prepare(Replica replica, byte[] key, Ballot ballot, Ballot since) {
        return call(replica, "prepare", () -> local.prepare(key, ballot, since), PaxosPrepare.request(key, ballot, since));
    }

    /** Emits the ballot the replica has promised after: the proposal's if it accepted it. */
    Mono<Ballot> accept(Replica replica, byte[] key, Proposal proposal) {
        return call(replica, "accept", () -> local.accept(key, proposal), PaxosAccept.request(key, proposal));
    }

    Mono<Boolean> commit(Replica replica, byte[] key, Commit commit, Record record) {
        return call(replica, "commit", () -> {
            local.commit(key, commit, record);
            return true;
        }, PaxosCommit.request(key, commit, record));
    }

    private <T> Mono<T> call(Replica replica, String what, Callable<T> locally, PeerCall<T> remotely) {
        if (replica instanceof RemoteReplica remote) {
            return Mono.defer(() -> remote.call(what, remotely));
        }
        return Mono.fromCallable(locally).subscribeOn(storageScheduler);
    }
}
