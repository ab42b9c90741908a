package io.ringkv.backup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.stream.Stream;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.ringkv.overload.Throttle;
import io.ringkv.replication.Placement;
import io.ringkv.ring.HashRing;
import io.ringkv.ring.Member;
import io.ringkv.storage.RocksStore;
import io.ringkv.support.TestStores;

/**
 * A restore of a backup whose manifest someone who can write to the store changed: every pod
 * holds the store's keys. A name in it that would lead out of the restore's staging folder is
 * refused with the field named, and nothing outside that folder is written or deleted. In one
 * JVM: a one-node backup of an empty store, taken for real, then its manifest rewritten.
 */
class TamperedBackupTest {

    private static final String NODE = "http://127.0.0.1:1";

    @TempDir
    Path root;

    private Path staging;
    private Path outside;
    private RocksStore rocks;
    private BackupStore store;
    private NodeBackup node;
    private Restore restore;
    private String id;
    private NodeManifest manifest;

    @BeforeEach
    void backUp() throws IOException {
        staging = root.resolve("restore-staging");
        outside = Files.createDirectories(root.resolve("outside"));
        Files.writeString(outside.resolve("victim"), "kept");
        rocks = TestStores.open(root.resolve("data"));
        store = new DirectoryBackupStore(root.resolve("store"));
        BackupMetrics metrics = new BackupMetrics(new SimpleMeterRegistry());
        node = new NodeBackup(rocks, NODE, () -> List.of(NODE), store, root.resolve("backup-staging"), Throttle.of(1L << 30),
                System::currentTimeMillis, done -> {
                }, metrics);
        ClusterBackup cluster = new ClusterBackup(NODE, () -> List.of(NODE), name -> null, node, store, 7, Duration.ofSeconds(10),
                System::currentTimeMillis);
        id = cluster.start().id();
        Awaitility.await("the backup stored").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20))
                .until(() -> node.progress().map(progress -> !progress.running()).orElse(false));
        assertThat(node.progress().orElseThrow().phase()).isEqualTo("done");
        manifest = Manifests.node(store, id, NODE);
        HashRing ring = new HashRing(Member.named(List.of(NODE)), 8);
        restore = new Restore(cluster, store, staging, () -> new Placement(ring, ring, List.of(), name -> null), 1,
                Duration.ofSeconds(5), System::currentTimeMillis, metrics);
    }

    @AfterEach
    void close() {
        restore.close();
        node.close();
        rocks.close();
        store.close();
    }

    @Test
    void theUntamperedBackupRestoresThroughFoldersOnlyTheNodesUserCanOpen() throws IOException {
        assertThat(restored().phase()).isEqualTo("done");
        assertThat(Files.getPosixFilePermissions(staging)).isEqualTo(PosixFilePermissions.fromString("rwx------"));
        assertThat(Files.getPosixFilePermissions(staging.resolve("restore"))).isEqualTo(PosixFilePermissions.fromString("rwx------"));
        assertThat(Files.getPosixFilePermissions(root.resolve("backup-staging")))
                .as("where checkpoints wait for their upload").isEqualTo(PosixFilePermissions.fromString("rwx------"));
    }

    @Test
    void aFileNamedByAnAbsolutePathIsRefused() throws IOException {
        refused(withFirstFileNamed(outside.resolve("planted").toString()), "files[0].name");
    }

    @Test
    void aFileNamedOutOfTheSnapshotsFolderIsRefused() throws IOException {
        // From restore-staging/restore/<backup>-<identity>/ up to the test's root.
        refused(withFirstFileNamed("../../../outside/planted"), "files[0].name");
    }

    @Test
    void aBackupNamedByAnAbsolutePathIsRefused() throws IOException {
        Path doomed = Files.createDirectories(outside.resolve("doomed-" + manifest.storeIdentity()));
        Files.writeString(doomed.resolve("canary"), "kept");
        refused(withBackup(manifest, outside.resolve("doomed").toString()), "backup");
    }

    @Test
    void aStoreIdentityLeadingOutOfTheStagingFolderIsRefused() throws IOException {
        Path doomed = Files.createDirectories(outside.resolve("doomed"));
        Files.writeString(doomed.resolve("canary"), "kept");
        refused(withIdentity(manifest, "x/../../../outside/doomed"), "storeIdentity");
    }

    @Test
    void aFileStoredElsewhereThanItsNameSaysIsRefused() throws IOException {
        refused(withFiles(manifest, manifest.files().stream()
                .map(file -> new NodeManifest.File(file.name(), "backups/" + id + "/nodes/other/" + file.name(), file.bytes(), file.crc32c()))
                .toList()), "files[0].object");
    }

    @Test
    void aBackupJsonNamingAMemberOutsideTheNodesFolderIsRefused() throws IOException {
        Manifests.write(store, BackupLayout.started(id), new BackupStarted(BackupStarted.FORMAT, id, 0, NODE, List.of("..")));
        assertThatThrownBy(() -> restore.start(id, Optional.empty())).isInstanceOf(IOException.class)
                .hasMessageContaining("backups/" + id + "/backup.json").hasMessageContaining("members[0] is \"..\"");
    }

    /** Restores the backup with its manifest replaced: it fails naming {@code field}, and nothing outside the staging folder changed. */
    private void refused(NodeManifest tampered, String field) throws IOException {
        Manifests.write(store, BackupLayout.manifest(id, NODE), tampered);
        Map<Path, String> before = outsideTheStagingFolder();
        Progress failed = restored();
        assertThat(outsideTheStagingFolder()).as("what is outside the staging folder").isEqualTo(before);
        assertThat(failed.phase()).isEqualTo("failed");
        assertThat(failed.error()).contains("is refused: its " + field + " is ");
    }

    private Progress restored() throws IOException {
        restore.start(id, Optional.empty());
        Awaitility.await("the restore finished").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20))
                .until(() -> !restore.progress().orElseThrow().running());
        return restore.progress().orElseThrow();
    }

    /** Every file and folder under the test's root but the restore's staging folder and the data that goes on changing, with each file's content. */
    private Map<Path, String> outsideTheStagingFolder() throws IOException {
        Map<Path, String> found = new TreeMap<>();
        try (Stream<Path> all = Files.walk(root)) {
            for (Path path : all.filter(path -> !path.startsWith(staging) && !path.startsWith(root.resolve("data"))
                    && !path.startsWith(root.resolve("backup-staging"))).toList()) {
                found.put(path, Files.isRegularFile(path) ? Files.readString(path, StandardCharsets.ISO_8859_1) : "");
            }
        }
        return found;
    }

    private NodeManifest withFirstFileNamed(String name) {
        List<NodeManifest.File> files = new ArrayList<>(manifest.files());
        NodeManifest.File first = files.getFirst();
        files.set(0, new NodeManifest.File(name, first.object(), first.bytes(), first.crc32c()));
        return withFiles(manifest, files);
    }

    private static NodeManifest withFiles(NodeManifest m, List<NodeManifest.File> files) {
        return new NodeManifest(m.format(), m.backup(), m.node(), m.ring(), m.takenMillis(), m.storeIdentity(), m.records(),
                m.tombstones(), m.oldestTimestamp(), m.newestTimestamp(), files);
    }

    private static NodeManifest withBackup(NodeManifest m, String backup) {
        return new NodeManifest(m.format(), backup, m.node(), m.ring(), m.takenMillis(), m.storeIdentity(), m.records(),
                m.tombstones(), m.oldestTimestamp(), m.newestTimestamp(), m.files());
    }

    private static NodeManifest withIdentity(NodeManifest m, String identity) {
        return new NodeManifest(m.format(), m.backup(), m.node(), m.ring(), m.takenMillis(), identity, m.records(),
                m.tombstones(), m.oldestTimestamp(), m.newestTimestamp(), m.files());
    }
}
