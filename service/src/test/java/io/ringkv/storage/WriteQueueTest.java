package io.ringkv.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import io.ringkv.record.Record;

class WriteQueueTest {

    private static final int MIB = 1 << 20;

    /** Commits nothing until let go: the writer is busy with its first batch meanwhile. */
    private static final class SlowCommitter {
        final CountDownLatch started = new CountDownLatch(1);
        final CountDownLatch letGo = new CountDownLatch(1);

        boolean[] commit(List<WriteQueue.Write> batch) {
            started.countDown();
            try {
                letGo.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return new boolean[batch.size()];
        }
    }

    private static WriteQueue.Write value(String key, int bytes) {
        return new WriteQueue.Write(WriteQueue.Kind.RECORD, key.getBytes(), Record.value(1, new byte[bytes]), null);
    }

    private static WriteQueue.Write hint(String key, int bytes) {
        return new WriteQueue.Write(WriteQueue.Kind.HINT_PUT, key.getBytes(), null, new byte[bytes]);
    }

    /**
     * The values waiting, and those being committed, are bounded in bytes: with 4 MiB allowed and
     * 3 MiB committing, another 3 MiB (a value or a hint) is refused at once, while a tombstone,
     * which holds no value, still waits; once the commit ends there is room again.
     */
    @Test
    void valuesWaitingAreBoundedInBytes() throws Exception {
        SlowCommitter committer = new SlowCommitter();
        try (WriteQueue queue = new WriteQueue(committer::commit, 1000, 4 * MIB)) {
            CompletableFuture<Boolean> committing = queue.submit(value("a", 3 * MIB));
            assertThat(committer.started.await(5, TimeUnit.SECONDS)).isTrue();
            assertThat(queue.valueBytes()).as("held while it commits").isEqualTo(3 * MIB);

            assertRefused(queue.submit(value("b", 3 * MIB)), "bytes of values wait");
            assertRefused(queue.submit(hint("c", 3 * MIB)), "bytes of values wait");
            CompletableFuture<Boolean> tombstone = queue.submit(
                    new WriteQueue.Write(WriteQueue.Kind.RECORD, "d".getBytes(), Record.tombstone(2), null));
            CompletableFuture<Boolean> small = queue.submit(value("e", MIB / 2));

            committer.letGo.countDown();
            committing.get(5, TimeUnit.SECONDS);
            tombstone.get(5, TimeUnit.SECONDS);
            small.get(5, TimeUnit.SECONDS);
            assertThat(queue.valueBytes()).as("given back once committed").isZero();
            queue.submit(value("b", 3 * MIB)).get(5, TimeUnit.SECONDS);
        }
    }

    /** A value alone is taken whatever its size: the node accepted it, and nothing else waits. */
    @Test
    void aValueAloneIsTakenWhateverItsSize() throws Exception {
        try (WriteQueue queue = new WriteQueue(batch -> new boolean[batch.size()], 1000, MIB)) {
            queue.submit(value("large", 5 * MIB)).get(5, TimeUnit.SECONDS);
            assertThat(queue.valueBytes()).isZero();
        }
    }

    @Test
    void writesWaitingAreBoundedInCount() throws Exception {
        SlowCommitter committer = new SlowCommitter();
        try (WriteQueue queue = new WriteQueue(committer::commit, 2, 64 * MIB)) {
            CompletableFuture<Boolean> committing = queue.submit(value("a", 1));
            assertThat(committer.started.await(5, TimeUnit.SECONDS)).isTrue();
            CompletableFuture<Boolean> second = queue.submit(value("b", 1));
            CompletableFuture<Boolean> third = queue.submit(value("c", 1));
            assertRefused(queue.submit(value("d", 1)), "more than 2 writes wait");
            committer.letGo.countDown();
            for (var write : List.of(committing, second, third)) {
                write.get(5, TimeUnit.SECONDS);
            }
        }
    }

    private static void assertRefused(CompletableFuture<Boolean> write, String reason) {
        assertThatThrownBy(() -> write.get(1, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class)
                .cause().isInstanceOf(StorageOverloadedException.class).hasMessageContaining(reason);
    }
}
