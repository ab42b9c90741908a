package io.ringkv.backup;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import java.util.zip.CRC32C;
import java.util.zip.CheckedInputStream;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.util.FileSystemUtils;

import io.ringkv.replication.Snapshots;
import io.ringkv.overload.Throttle;
import io.ringkv.storage.CheckpointReader;
import io.ringkv.storage.RocksStore;

/**
 * This node's part of a backup: a RocksDB checkpoint of its store (consistent, taken while writes
 * go on), uploaded to the {@link BackupStore} at the backup's rate, then its {@link NodeManifest}.
 * Incremental: a table file this store uploaded for an earlier backup is not sent again. One at a
 * time: a second request while one uploads is refused, not queued. The checkpoint lives in the
 * staging directory (on the data volume, so that it is hard links, not copies) until uploaded.
 */
public final class NodeBackup implements Snapshots, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(NodeBackup.class);

    private final RocksStore store;
    private final String self;
    private final Supplier<List<String>> ring;
    private final BackupStore target;
    private final Path staging;
    private final Throttle throttle;
    private final LongSupplier clock;
    private final Consumer<String> finished;
    private final BackupMetrics metrics;
    /** Uploads block on the disk, the network and the throttle: their own thread, never an event loop's. */
    private final ExecutorService uploads = Executors.newSingleThreadExecutor(Thread.ofPlatform().name("backup-upload").daemon().factory());
    private volatile JobProgress current;

    /**
     * @param staging  where checkpoints wait for their upload: on the store's file system
     * @param finished told a backup's id once this node's manifest is stored
     */
    public NodeBackup(RocksStore store, String self, Supplier<List<String>> ring, BackupStore target, Path staging, Throttle throttle,
            LongSupplier clock, Consumer<String> finished, BackupMetrics metrics) {
        this.store = store;
        this.self = self;
        this.ring = ring;
        this.target = target;
        this.staging = staging;
        this.throttle = throttle;
        this.clock = clock;
        this.finished = finished;
        this.metrics = metrics;
        removeLeftovers();
    }

    /** Checkpoints a crash left behind: their backups were never finished here. */
    private void removeLeftovers() {
        if (Files.isDirectory(staging)) {
            try (Stream<Path> leftovers = Files.list(staging)) {
                leftovers.filter(path -> BackupLayout.isId(path.getFileName().toString())).forEach(NodeBackup::deleteTree);
            } catch (IOException e) {
                log.warn("could not clear {}: {}", staging, e.toString());
            }
        }
    }

    /** The last or current backup on this node; empty if none since it started. */
    public Optional<Progress> progress() {
        JobProgress job = current;
        return job == null ? Optional.empty() : Optional.of(job.snapshot());
    }

    /**
     * Takes the snapshot for backup {@code id} now, and uploads it in the background. Blocking
     * (a memtable flush and the links): call it on a thread that may block.
     *
     * @return empty once the snapshot is taken, else why not
     */
    @Override
    public synchronized Optional<String> take(String id) {
        if (!BackupLayout.isId(id)) {
            return Optional.of("not a backup id: " + id);
        }
        JobProgress running = current;
        if (running != null && running.running()) {
            return Optional.of("backup " + running.job() + " is still uploading on " + self);
        }
        JobProgress job = new JobProgress(id, "snapshot", clock);
        current = job;
        Path checkpoint = LocalFiles.entry(staging, id);
        long taken;
        String identity;
        try {
            LocalFiles.createDirectories(staging);
            deleteTree(checkpoint);
            identity = store.identity();
            if (!BackupLayout.isStoreIdentity(identity)) {
                // A restore would refuse the manifest: better no backup than one that cannot be restored.
                throw new IOException("the store's identity is not a UUID: " + identity);
            }
            store.checkpoint(checkpoint);
            taken = clock.getAsLong();
        } catch (IOException | RuntimeException e) {
            job.failed(e);
            metrics.failed();
            deleteTree(checkpoint);
            return Optional.of("could not take a snapshot on " + self + ": " + e.getMessage());
        }
        List<String> members = ring.get();
        uploads.execute(() -> upload(id, checkpoint, identity, taken, members, job));
        return Optional.empty();
    }

    private void upload(String id, Path checkpoint, String identity, long taken, List<String> members, JobProgress job) {
        try {
            job.phase("upload");
            // Counted before the file list is taken: opening the checkpoint adds its own log file.
            CheckpointReader.Contents contents;
            try (CheckpointReader reader = CheckpointReader.open(checkpoint)) {
                contents = reader.contents();
            }
            List<Path> files = checkpointFiles(checkpoint);
            job.files(files.size(), files.stream().mapToLong(NodeBackup::size).sum());
            job.records(contents.records());
            Map<String, Long> storedShared = target.list(BackupLayout.FILES + identity + "/").stream()
                    .collect(Collectors.toMap(BackupStore.Stored::name, BackupStore.Stored::bytes));
            Map<String, NodeManifest.File> uploadedBefore = uploadedBefore(id, identity);
            List<NodeManifest.File> stored = files.stream().map(file -> {
                String name = file.getFileName().toString();
                String object = BackupLayout.object(id, self, identity, name);
                long bytes = size(file);
                NodeManifest.File before = uploadedBefore.get(object);
                if (before != null && before.bytes() == bytes && storedShared.getOrDefault(object, -1L) == bytes) {
                    job.fileDone(bytes, true);
                    return before;
                }
                NodeManifest.File uploaded = new NodeManifest.File(name, object, bytes, uploadFile(file, object, bytes));
                job.fileDone(bytes, false);
                metrics.uploaded(bytes);
                return uploaded;
            }).toList();
            NodeManifest manifest = new NodeManifest(NodeManifest.FORMAT, id, self, members, taken, identity, contents.records(),
                    contents.tombstones(), contents.oldestTimestamp(), contents.newestTimestamp(), stored);
            Manifests.write(target, BackupLayout.manifest(id, self), manifest);
            job.finished();
            metrics.succeeded(clock.getAsLong());
            Progress done = job.snapshot();
            log.info("backup {}: stored {} files ({} bytes, {} files stored before) of {} records in {} ms", id, done.filesDone(),
                    done.bytesDone(), done.filesSkipped(), contents.records(), done.finishedMillis() - done.startedMillis());
            finished.accept(id);
        } catch (IOException | RuntimeException e) {
            job.failed(e);
            metrics.failed();
            log.warn("backup {} failed on this node: {}", id, e.toString());
        } finally {
            deleteTree(checkpoint);
        }
    }

    /** The checkpoint's files, without the info logs that opening it read-only writes. */
    private static List<Path> checkpointFiles(Path checkpoint) throws IOException {
        try (Stream<Path> listing = Files.list(checkpoint)) {
            return listing.filter(Files::isRegularFile)
                    .filter(file -> !file.getFileName().toString().startsWith("LOG"))
                    .sorted(Comparator.comparing(Path::toString))
                    .toList();
        }
    }

    /**
     * The files this store's newest earlier manifest lists, by object: what need not be sent
     * again, with their checksums (a file a failed upload left has no manifest and is sent again).
     */
    private Map<String, NodeManifest.File> uploadedBefore(String id, String identity) throws IOException {
        String mine = BackupLayout.manifestSuffix(self);
        Optional<String> newest = target.list(BackupLayout.BACKUPS).stream()
                .map(BackupStore.Stored::name)
                .filter(name -> name.endsWith(mine))
                .map(name -> BackupLayout.backupOf(name).orElse(""))
                .filter(earlier -> BackupLayout.isId(earlier) && earlier.compareTo(id) < 0)
                .max(Comparator.naturalOrder());
        Map<String, NodeManifest.File> files = new HashMap<>();
        if (newest.isPresent()) {
            NodeManifest before = Manifests.node(target, newest.get(), self);
            if (before.storeIdentity().equals(identity)) {
                before.files().forEach(file -> files.put(file.object(), file));
            }
        }
        return files;
    }

    private String uploadFile(Path file, String object, long bytes) {
        CRC32C crc = new CRC32C();
        try (InputStream in = new CheckedInputStream(new ThrottledInputStream(Files.newInputStream(file), throttle), crc)) {
            target.put(object, in, bytes);
        } catch (IOException e) {
            throw new UncheckedIOException("could not store " + file.getFileName() + " as " + object + ": " + e.getMessage(), e);
        }
        return Long.toHexString(crc.getValue());
    }

    private static long size(Path file) {
        try {
            return Files.size(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Deletes a checkpoint or a download; one that cannot be deleted is logged, not thrown: the next run clears it. */
    static void deleteTree(Path root) {
        try {
            FileSystemUtils.deleteRecursively(root);
        } catch (IOException e) {
            log.warn("could not delete {}: {}", root, e.toString());
        }
    }

    /** Stops an upload under way (its backup stays incomplete), then the thread. */
    @Override
    public void close() {
        uploads.shutdownNow();
        try {
            uploads.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
