package io.ringkv.backup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;

class LocalFilesTest {

    private static final Path FOLDER = Path.of("/data/backup-staging/restore");

    @Test
    void anEntryIsANameInItsFolder() {
        assertThat(LocalFiles.entry(FOLDER, "MANIFEST-000005")).isEqualTo(FOLDER.resolve("MANIFEST-000005"));
    }

    @Test
    void aNameThatLeadsElsewhereIsNoEntry() {
        for (String name : List.of("/etc/passwd", "../x", "a/../../x", "a/b", "..", ".", "", "a/..")) {
            assertThatThrownBy(() -> LocalFiles.entry(FOLDER, name)).as(name).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("is not a name of an entry in " + FOLDER);
        }
    }
}
