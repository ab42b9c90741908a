package io.ringkv.backup;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import java.util.zip.CRC32C;
import java.util.zip.CheckedInputStream;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.ringkv.record.HybridClock;
import io.ringkv.record.KeyedRecord;
import io.ringkv.record.RecordBatch;
import io.ringkv.replication.Placement;
import io.ringkv.replication.Replica;
import io.ringkv.storage.CheckpointReader;
import reactor.core.Exceptions;
import reactor.util.retry.Retry;

/**
 * A backup restored into this cluster, whatever its size: every record of every member's
 * snapshot is written to its owners on this cluster's ring, at its original version, so that a
 * newer write already here wins, and a restore cut short and run again ends in the same state.
 * The node asked streams every snapshot itself, one at a time (so it needs room for the largest
 * one in its staging directory): it downloads the snapshot's files, checks their checksums,
 * opens them read-only and sends each record to the key's replicas in batches.
 *
 * <p>As of a point in time: records newer than it are skipped, and the earlier backups
 * {@link BackupCatalog#restoreChain} names are streamed first, so each key ends at its newest
 * version no later than that time that some backup holds. A delete at or before that time stays
 * a delete; one after it is skipped, so the key comes back with its value of then.
 */
public final class Restore implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(Restore.class);
    /** Batches in flight to the owners at once. */
    private static final int IN_FLIGHT = 8;
    /** How often one batch is tried before the restore stops (it can be run again). */
    private static final int ATTEMPTS = 5;
    /** Records streamed between two updates of the progress. */
    private static final int PROGRESS_EVERY = 1000;

    private final ClusterBackup backups;
    private final BackupStore store;
    private final Path staging;
    private final Supplier<Placement> placement;
    private final int replicationFactor;
    private final Duration writeTimeout;
    private final LongSupplier clock;
    private final BackupMetrics metrics;
    private final ExecutorService worker = Executors.newSingleThreadExecutor(Thread.ofPlatform().name("backup-restore").daemon().factory());
    private volatile JobProgress current;

    /**
     * @param placement         where keys live now, this cluster's ring
     * @param replicationFactor how many replicas each key has here
     * @param writeTimeout      how long one batch may take at a replica
     */
    public Restore(ClusterBackup backups, BackupStore store, Path staging, Supplier<Placement> placement, int replicationFactor,
            Duration writeTimeout, LongSupplier clock, BackupMetrics metrics) {
        this.backups = backups;
        this.store = store;
        this.staging = staging;
        this.placement = placement;
        this.replicationFactor = replicationFactor;
        this.writeTimeout = writeTimeout;
        this.clock = clock;
        this.metrics = metrics;
    }

    public Optional<Progress> progress() {
        JobProgress job = current;
        return job == null ? Optional.empty() : Optional.of(job.snapshot());
    }

    /**
     * Begins restoring backup {@code from}, as of {@code asOf} if given, in the background.
     * Blocking (it reads the catalog).
     *
     * @throws IllegalArgumentException no such backup, or it is incomplete
     * @throws IllegalStateException    a restore is under way on this node
     */
    public synchronized Progress start(String from, Optional<Instant> asOf) throws IOException {
        JobProgress running = current;
        if (running != null && running.running()) {
            throw new IllegalStateException("a restore of " + running.job() + " is under way on this node");
        }
        if (!BackupLayout.isId(from)) {
            throw new IllegalArgumentException("not a backup id: " + from);
        }
        List<BackupCatalog.Entry> chain = backups.catalog().restoreChain(from, asOf);
        JobProgress job = new JobProgress(from, "download", clock);
        current = job;
        worker.execute(() -> run(chain, asOf, job));
        return job.snapshot();
    }

    private void run(List<BackupCatalog.Entry> chain, Optional<Instant> asOf, JobProgress job) {
        long newestKept = asOf.map(time -> HybridClock.timestampAt(time.toEpochMilli() + 1) - 1).orElse(Long.MAX_VALUE);
        try {
            List<NodeManifest> snapshots = new ArrayList<>();
            for (BackupCatalog.Entry entry : chain) {
                for (String member : entry.started().members()) {
                    NodeManifest manifest = Manifests.node(store, entry.id(), member);
                    snapshots.add(manifest);
                    job.files(manifest.files().size(), manifest.bytes());
                }
            }
            for (NodeManifest snapshot : snapshots) {
                Path directory = LocalFiles.entry(staging.resolve("restore"), snapshot.backup() + "-" + snapshot.storeIdentity());
                job.phase("download");
                download(snapshot, directory, job);
                job.phase("stream");
                long streamed = stream(directory, newestKept, job);
                log.info("restore: streamed {} records of {}'s snapshot in backup {}", streamed, snapshot.node(), snapshot.backup());
                NodeBackup.deleteTree(directory);
            }
            job.finished();
            Progress done = job.snapshot();
            log.info("restored backup {}{}: {} records from {} snapshots in {} ms", done.job(),
                    asOf.map(time -> " as of " + time).orElse(""), done.records(), snapshots.size(),
                    done.finishedMillis() - done.startedMillis());
        } catch (Exception e) {
            job.failed(e);
            log.warn("restore of {} stopped: {}; run it again to finish it", job.snapshot().job(), e.toString());
        }
    }

    /** Fetches the snapshot's files that are not here already whole (a restore run again resumes), checking each one's CRC-32C. */
    private void download(NodeManifest snapshot, Path directory, JobProgress job) throws IOException {
        LocalFiles.createDirectories(directory);
        for (NodeManifest.File file : snapshot.files()) {
            Path local = LocalFiles.entry(directory, file.name());
            if (Files.exists(local) && Files.size(local) == file.bytes() && crc32c(local).equals(file.crc32c())) {
                job.fileDone(file.bytes(), true);
                continue;
            }
            store.download(file.object(), local);
            String found = crc32c(local);
            if (Files.size(local) != file.bytes() || !found.equals(file.crc32c())) {
                throw new IOException(file.object() + " is damaged: " + Files.size(local) + " bytes with CRC-32C " + found + ", the manifest says "
                        + file.bytes() + " bytes with " + file.crc32c());
            }
            job.fileDone(file.bytes(), false);
        }
    }

    private static String crc32c(Path file) throws IOException {
        CRC32C crc = new CRC32C();
        try (InputStream in = new CheckedInputStream(Files.newInputStream(file), crc)) {
            in.transferTo(OutputStream.nullOutputStream());
        }
        return Long.toHexString(crc.getValue());
    }

    /** Writes every record no newer than {@code newestKept} to its replicas; returns how many it wrote. */
    private long stream(Path directory, long newestKept, JobProgress job) throws Exception {
        Map<String, Pending> pending = new HashMap<>();
        Deque<CompletableFuture<Void>> inFlight = new ArrayDeque<>();
        long streamed = 0;
        try (CheckpointReader reader = CheckpointReader.open(directory)) {
            Placement where = placement.get();
            int from = Math.min(replicationFactor, where.members());
            Iterator<KeyedRecord> records = reader.records();
            while (records.hasNext()) {
                KeyedRecord record = records.next();
                if (record.record().timestamp() > newestKept) {
                    continue;
                }
                for (Replica replica : where.writeReplicas(record.key(), from)) {
                    Pending batch = pending.computeIfAbsent(replica.name(), name -> new Pending(replica));
                    if (batch.wouldOverflow(record)) {
                        send(batch.take(), batch.replica, inFlight);
                    }
                    batch.add(record);
                }
                if (++streamed % PROGRESS_EVERY == 0) {
                    job.records(PROGRESS_EVERY);
                }
            }
            for (Pending batch : pending.values()) {
                if (!batch.records.isEmpty()) {
                    send(batch.take(), batch.replica, inFlight);
                }
            }
            while (!inFlight.isEmpty()) {
                await(inFlight.poll());
            }
            job.records(streamed % PROGRESS_EVERY);
        }
        metrics.restored(streamed);
        return streamed;
    }

    /** Sends a batch, with at most {@value #IN_FLIGHT} in flight: waits for the oldest first when that many are. */
    private void send(List<KeyedRecord> batch, Replica replica, Deque<CompletableFuture<Void>> inFlight) throws Exception {
        while (inFlight.size() >= IN_FLIGHT) {
            await(inFlight.poll());
        }
        inFlight.add(replica.writeBatch(batch)
                .timeout(writeTimeout)
                .retryWhen(Retry.backoff(ATTEMPTS - 1, Duration.ofMillis(200)))
                .onErrorMap(Exceptions::isRetryExhausted, exhausted -> new IllegalStateException("could not write " + batch.size()
                        + " records to " + replica.name() + " in " + ATTEMPTS + " attempts: " + exhausted.getCause().getMessage(),
                        exhausted.getCause()))
                .toFuture());
    }

    private void await(CompletableFuture<Void> write) throws Exception {
        try {
            write.get(writeTimeout.toMillis() * ATTEMPTS * 4, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof Exception cause ? cause : e;
        } catch (TimeoutException e) {
            throw new IllegalStateException("a batch took longer than " + writeTimeout.multipliedBy(ATTEMPTS * 4) + " to store", e);
        }
    }

    /** The records gathered for one replica, sent as one batch when full. */
    private static final class Pending {
        final Replica replica;
        List<KeyedRecord> records = new ArrayList<>();
        long bytes;

        Pending(Replica replica) {
            this.replica = replica;
        }

        boolean wouldOverflow(KeyedRecord next) {
            return !records.isEmpty()
                    && (records.size() == RecordBatch.MAX_KEYS || bytes + RecordBatch.entrySize(next) > RecordBatch.MAX_BYTES);
        }

        void add(KeyedRecord record) {
            records.add(record);
            bytes += RecordBatch.entrySize(record);
        }

        List<KeyedRecord> take() {
            List<KeyedRecord> taken = records;
            records = new ArrayList<>();
            bytes = 0;
            return taken;
        }
    }

    @Override
    public void close() {
        worker.shutdownNow();
    }
}
