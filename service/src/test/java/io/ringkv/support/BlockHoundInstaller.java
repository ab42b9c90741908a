package io.ringkv.support;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestPlan;

import io.ringkv.storage.RangeCursor;
import io.ringkv.storage.RocksStore;
import io.ringkv.storage.TombstoneIndex;
import reactor.blockhound.BlockHound;
import reactor.blockhound.BlockingOperationError;

/**
 * Installs BlockHound before any test runs (registered through META-INF/services), so every test
 * that starts a node also checks that nothing blocks an event-loop thread. A blocking call fails
 * where it happens and is also recorded, because an error thrown inside a server may surface to
 * the test only as a failed request.
 */
public final class BlockHoundInstaller implements TestExecutionListener {

    private static final List<String> VIOLATIONS = new CopyOnWriteArrayList<>();
    private static final String BOUNDED_ELASTIC_EXECUTOR = "reactor.core.scheduler.BoundedElasticScheduler$BoundedScheduledExecutorService";

    @Override
    public void testPlanExecutionStarted(TestPlan testPlan) {
        // install(...) also loads the library integrations (Reactor's and Reactor Netty's), which
        // tell BlockHound which threads must never block.
        BlockHound.install(builder -> builder
                // RocksDB calls block on disk inside native code, which BlockHound cannot see:
                // flag the store's entry points themselves.
                // (getIfCached never reads the disk, and apply only queues the write for the writer.)
                .markAsBlocking(RocksStore.class, "get", "([B)Ljava/util/Optional;")
                .markAsBlocking(RocksStore.class, "openRange", "([B[B)Lio/ringkv/storage/RangeCursor;")
                .markAsBlocking(TombstoneIndex.class, "purgeTombstonesBefore", "(J)Lio/ringkv/storage/TombstoneIndex$Purged;")
                .markAsBlocking(RocksStore.class, "flushIfQuiet", "()Z")
                .markAsBlocking(RangeCursor.class, "next", "()Lio/ringkv/storage/KeyedRecord;")
                .markAsBlocking(RangeCursor.class, "close", "()V")
                // Handing a task to a bounded-elastic scheduler (our storage scheduler) takes its
                // queue's lock for a moment, which BlockHound sees as parking when another thread
                // holds it: reactor-core#2137, open. That is the hand-off away from the event loop,
                // not blocking I/O on it.
                .allowBlockingCallsInside(BOUNDED_ELASTIC_EXECUTOR, "schedule")
                .allowBlockingCallsInside(BOUNDED_ELASTIC_EXECUTOR, "submit")
                .allowBlockingCallsInside(BOUNDED_ELASTIC_EXECUTOR, "execute")
                // Netty's adaptive allocator takes a StampedLock for a moment when event loops
                // contend while it adds a magazine (seen with bodies of tens of KiB): bookkeeping of
                // its own memory, not I/O.
                .allowBlockingCallsInside("io.netty.buffer.AdaptivePoolingAllocator$MagazineGroup", "tryExpandMagazines")
                .blockingMethodCallback(method -> {
                    VIOLATIONS.add(method + " on " + Thread.currentThread().getName() + " in " + callers());
                    throw new BlockingOperationError(method);
                }));
    }

    /** Where the blocking call was made: the top of its stack, enough to find it. */
    private static String callers() {
        return java.util.Arrays.stream(new Throwable().getStackTrace())
                .filter(frame -> !frame.getClassName().startsWith("reactor.blockhound") && !frame.getClassName().startsWith("io.ringkv.support."))
                .limit(14)
                .map(StackTraceElement::toString)
                .toList()
                .toString();
    }

    /** The blocking calls seen on non-blocking threads since the tests started. */
    public static List<String> violations() {
        return List.copyOf(VIOLATIONS);
    }

    /** The blocking calls seen since {@link #violations()} had {@code mark} entries. */
    public static List<String> violationsSince(int mark) {
        List<String> all = violations();
        return all.subList(Math.min(mark, all.size()), all.size());
    }
}
