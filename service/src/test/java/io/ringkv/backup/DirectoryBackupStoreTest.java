package io.ringkv.backup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.ringkv.backup.BackupStore.Stored;

class DirectoryBackupStoreTest extends BackupStoreContract {

    private static final Set<PosixFilePermission> OWNER_READ_WRITE = PosixFilePermissions.fromString("rw-------");

    @TempDir
    Path stores;

    @Override
    BackupStore open(String location) {
        return new DirectoryBackupStore(stores.resolve(location));
    }

    @Test
    void keepsEachObjectInAFileBelowItsRoot() throws IOException {
        BackupStore store = store("files");
        store.putBytes("backup-1/data/1.sst", bytes("one"));
        assertThat(stores.resolve("files/backup-1/data/1.sst")).hasContent("one");
        try (var all = Files.walk(stores)) {
            assertThat(all.filter(Files::isRegularFile)).as("no partial file left")
                    .containsExactly(stores.resolve("files/backup-1/data/1.sst"));
        }
        assertThat(store.describe()).isEqualTo(stores.resolve("files").toString());
    }

    @Test
    void listsARootThatIsALink() throws IOException {
        Path volume = Files.createDirectories(stores.resolve("volume"));
        BackupStore store = new DirectoryBackupStore(Files.createSymbolicLink(stores.resolve("mounted"), volume));
        store.putBytes("a/1", bytes("1"));
        assertThat(volume.resolve("a/1")).hasContent("1");
        assertThat(store.list("")).containsExactly(new Stored("a/1", 1));
        assertThat(store.list("a/")).containsExactly(new Stored("a/1", 1));
    }

    @Test
    void listsNeitherFilesBeingWrittenNorTheVolumesLostAndFound() throws IOException {
        BackupStore store = store("skips");
        store.putBytes("a/1", bytes("1"));
        Files.writeString(stores.resolve("skips/a/.1.4f2a.partial"), "half");
        Files.writeString(stores.resolve("skips/.2.partial"), "half");
        Files.createDirectories(stores.resolve("skips/lost+found"));
        Files.writeString(stores.resolve("skips/lost+found/#1234"), "fsck's");
        Files.createDirectories(stores.resolve("skips/.snapshot/a"));
        Files.writeString(stores.resolve("skips/.snapshot/a/1"), "a copy");

        assertThat(store.list("")).containsExactly(new Stored("a/1", 1));
        assertThat(store.list("a/")).containsExactly(new Stored("a/1", 1));
        store.delete(List.of("a"));
        assertThat(stores.resolve("skips/a")).as("a directory is not an object").isDirectory();
    }

    @Test
    void createsItsFilesAndFoldersForTheNodesUserAlone() throws IOException {
        BackupStore store = store("private");
        store.putBytes("backups/1/nodes/n/CURRENT", bytes("one"));
        Path downloaded = Files.createDirectories(stores.resolve("restore")).resolve("CURRENT");
        store.download("backups/1/nodes/n/CURRENT", downloaded);

        assertThat(Files.getPosixFilePermissions(stores.resolve("private/backups/1/nodes/n/CURRENT"))).isEqualTo(OWNER_READ_WRITE);
        assertThat(Files.getPosixFilePermissions(downloaded)).as("a download").isEqualTo(OWNER_READ_WRITE);
        for (String folder : List.of("", "/backups", "/backups/1", "/backups/1/nodes", "/backups/1/nodes/n")) {
            assertThat(Files.getPosixFilePermissions(stores.resolve("private" + folder))).as("private" + folder)
                    .isEqualTo(PosixFilePermissions.fromString("rwx------"));
        }
    }

    /** Whoever can write to the volume can plant a link in it: no object's path goes through one. */
    @Test
    void neitherWritesNorDeletesNorReadsThroughALinkInTheVolume() throws IOException {
        Path elsewhere = Files.createDirectories(stores.resolve("elsewhere"));
        Files.writeString(elsewhere.resolve("victim"), "kept");
        BackupStore store = store("linked");
        store.putBytes("files/x", bytes("x"));
        Files.createSymbolicLink(stores.resolve("linked/files/identity"), elsewhere);

        assertThatThrownBy(() -> store.delete(List.of("files/x", "files/identity/victim"))).isInstanceOf(IOException.class)
                .hasMessageContaining("files/identity/victim");
        assertThatThrownBy(() -> store.putBytes("files/identity/planted", bytes("planted"))).isInstanceOf(IOException.class);
        assertThatThrownBy(() -> store.getBytes("files/identity/victim")).isInstanceOf(IOException.class);
        assertThat(store.list("files/identity/")).isEmpty();
        try (var left = Files.list(elsewhere)) {
            assertThat(left).containsExactly(elsewhere.resolve("victim"));
        }
        assertThat(elsewhere.resolve("victim")).hasContent("kept");
        assertThat(store.getBytes("files/x")).as("all or none deleted").isPresent();
    }

    /**
     * Nodes share the volume: one lists the backups (for its incremental upload) while another
     * renames its files into place. A file that went between the listing of its directory and the
     * reading of its attributes is not an object to list, and no reason to fail (it failed a whole
     * node's backup: "NoSuchFileException: …/.MANIFEST-000005.….partial").
     */
    @Test
    void aListingIsNotUpsetByFilesRenamedOrDeletedWhileItWalks() throws Exception {
        BackupStore store = store("busy");
        CompletableFuture<Void> writing = CompletableFuture.runAsync(() -> {
            try {
                for (int i = 0; i < 2000; i++) {
                    store.putBytes("backups/b/nodes/n/" + i, bytes("x"));
                    if (i % 2 == 0) {
                        store.delete(List.of("backups/b/nodes/n/" + i));
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
        List<Integer> sizes = new ArrayList<>();
        while (!writing.isDone()) {
            sizes.add(store.list("backups/").size());
        }
        writing.join();
        assertThat(sizes).as("listings made while files were written").hasSizeGreaterThan(10);
        assertThat(store.list("backups/")).hasSize(1000);
    }
}
