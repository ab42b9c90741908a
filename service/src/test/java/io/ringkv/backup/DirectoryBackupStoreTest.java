package io.ringkv.backup;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.ringkv.backup.BackupStore.Stored;

class DirectoryBackupStoreTest extends BackupStoreContract {

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
}
