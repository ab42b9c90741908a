package io.ringkv.conditional;

import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

import reactor.core.publisher.Mono;

/**
 * One request under consensus at a time per key on this node; the others wait their turn, in
 * order. Two rounds of one coordinator on one key would only preempt each other, and a request
 * that waited often finds, once its turn comes, that the one before it made its condition false:
 * it then answers from this node's copy without a round ({@link Precondition#provedFalseBy}).
 * On a key as hot as a counter that eight clients increment, that is most of them. Safety does
 * not depend on it: coordinators on other nodes still contend, and Paxos decides.
 */
final class KeyTurns {

    private final ConcurrentHashMap<ByteBuffer, CompletableFuture<Void>> last = new ConcurrentHashMap<>();

    /** Runs {@code work} once every request queued before it on the key has ended or been cancelled. */
    <T> Mono<T> inTurn(byte[] key, Supplier<Mono<T>> work) {
        return Mono.defer(() -> {
            ByteBuffer id = ByteBuffer.wrap(key);
            CompletableFuture<Void> mine = new CompletableFuture<>();
            CompletableFuture<Void> before = last.put(id, mine);
            Mono<Void> waited = before == null ? Mono.empty() : Mono.fromFuture(before, true);
            return waited.then(Mono.defer(work)).doFinally(signal -> {
                // A request cancelled while it waited ends its turn only once the one before has:
                // the one after it must not run beside that one.
                if (before == null) {
                    mine.complete(null);
                } else {
                    before.whenComplete((done, error) -> mine.complete(null));
                }
                last.remove(id, mine);
            });
        });
    }
}
