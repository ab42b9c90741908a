package io.ringkv.backup;

import java.nio.file.Path;

/**
 * The files and directories this package creates on a node's disk: each lies where it was meant
 * to, whatever the name it was made of.
 */
final class LocalFiles {

    private LocalFiles() {
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
