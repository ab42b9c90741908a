package io.ringkv.support;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.ringkv.record.LastWriteWins;
import io.ringkv.record.Record;
import io.ringkv.ring.HashRing;
import io.ringkv.storage.RocksStore;
import io.ringkv.storage.StorageSettings;
import reactor.blockhound.BlockingOperationError;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/** Proves that the detector the other tests rely on is installed and sees what matters here. */
class BlockHoundTest {

    @TempDir
    Path dir;

    @Test
    void waitingOnANonBlockingThreadIsCaught() {
        Mono<Boolean> parks = Mono.fromCallable(() -> new CountDownLatch(1).await(10, TimeUnit.MILLISECONDS))
                .subscribeOn(Schedulers.parallel());
        StepVerifier.create(parks)
                .expectErrorMatches(error -> error instanceof BlockingOperationError)
                .verify(Duration.ofSeconds(5));
    }

    @Test
    void aStoreCallOnANonBlockingThreadIsCaught() {
        try (RocksStore store = RocksStore.open(new StorageSettings(dir, 1 << 20, false, 1000, 1 << 20, 64L << 20, HashRing::token, 21_600), LastWriteWins.ORDER)) {
            StepVerifier.create(Mono.fromCallable(() -> store.get(new byte[] {1})).subscribeOn(Schedulers.parallel()))
                    .expectErrorMatches(error -> error instanceof BlockingOperationError)
                    .verify(Duration.ofSeconds(5));
            assertThat(BlockHoundInstaller.violations()).anyMatch(v -> v.contains("RocksStore#get"));
        }
    }

    /** The cache-only read and the queued write never wait for the disk: allowed on any thread. */
    @Test
    void theCacheOnlyReadAndTheQueuedWriteAreNotBlocking() {
        try (RocksStore store = RocksStore.open(new StorageSettings(dir, 1 << 20, false, 1000, 1 << 20, 64L << 20, HashRing::token, 21_600), LastWriteWins.ORDER)) {
            int mark = BlockHoundInstaller.violations().size();
            StepVerifier.create(Mono.fromCallable(() -> store.getIfCached(new byte[] {1}).known())
                            .then(Mono.fromFuture(() -> store.apply(new byte[] {2}, Record.value(1, new byte[] {3}))))
                            .subscribeOn(Schedulers.parallel()))
                    .expectNext(true)
                    .verifyComplete();
            assertThat(BlockHoundInstaller.violationsSince(mark)).isEmpty();
        }
    }
}
