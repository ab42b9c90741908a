package io.ringkv.storage;

import java.util.concurrent.CompletableFuture;
import java.util.function.UnaryOperator;

/**
 * The {@code paxos} column family: each key's consensus state, as bytes its owner
 * ({@code io.ringkv.paxos.Acceptor}) reads and writes. It borrows the store's handle; a change is
 * a read-modify-write on the store's one writer, so two changes of a key never interleave and a
 * change is in the write-ahead log, after every record write queued before it, when it completes.
 */
public final class ConsensusStates {

    private final RocksStore store;

    public ConsensusStates(RocksStore store) {
        this.store = store;
    }

    /**
     * Changes the key's state by {@code change}, which the writer thread runs on the current bytes
     * (null for none) and which returns the new bytes, or the same array to change nothing. Never
     * blocks.
     *
     * @return completes with whether the state changed, once it is in the write-ahead log
     */
    public CompletableFuture<Boolean> change(byte[] key, UnaryOperator<byte[]> change) {
        return store.submit(WriteQueue.Write.change(key, change));
    }
}
