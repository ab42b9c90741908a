package io.ringkv.backup;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/**
 * The files and directories this package creates on a node's disk or a mounted backup volume:
 * they hold every record of the store, so they are the node's user's alone (files 0600,
 * directories 0700), set as they are created rather than after, and each lies where it was meant
 * to, whatever the name it was made of.
 */
final class LocalFiles {

    /** For a file created with {@link java.nio.channels.FileChannel#open}. */
    static final FileAttribute<Set<PosixFilePermission>> OWNER_ONLY_FILE =
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"));
    private static final FileAttribute<Set<PosixFilePermission>> OWNER_ONLY_DIRECTORY =
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------"));

    private LocalFiles() {
    }

    /** Creates the directory and its missing parents, each only the owner's. */
    static Path createDirectories(Path directory) throws IOException {
        return Files.createDirectories(directory, OWNER_ONLY_DIRECTORY);
    }

    /** Creates {@code file}, which must not exist, only the owner's, for writing. */
    static OutputStream create(Path file) throws IOException {
        return Channels.newOutputStream(
                Files.newByteChannel(file, Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE), OWNER_ONLY_FILE));
    }

    /**
     * {@code directory}'s entry named {@code name}, checked to be just that, not a path that
     * leads elsewhere ({@code ..}, an absolute path, a separator): the last check before a write
     * or a delete, whatever was checked before.
     *
     * @throws IllegalArgumentException if it would not be an entry of {@code directory}
     */
    static Path entry(Path directory, String name) {
        Path parent = directory.toAbsolutePath().normalize();
        Path entry = parent.resolve(name).normalize();
        if (!parent.equals(entry.getParent())) {
            throw new IllegalArgumentException("\"" + name + "\" is not a name of an entry in " + parent);
        }
        return entry;
    }
}
