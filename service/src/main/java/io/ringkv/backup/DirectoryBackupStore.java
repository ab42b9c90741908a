package io.ringkv.backup;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Backups in a local directory, usually a mounted volume: an object is a file, its name the path
 * below the root. A file appears whole or not at all (written beside its place, then renamed), so
 * a crash or a concurrent listing never sees half an object. Unlike S3, a name cannot be both an
 * object and a directory of others ({@code a} and {@code a/b}): the second put fails.
 *
 * <p>Names are checked ({@link #checkName}) so that none escapes the root or aliases another, and
 * the same rule applies to {@link S3BackupStore}: a backup can move between the two kinds of store.
 * Nor does an object's path go through a link: whoever can write to the volume could plant one
 * that leads a write or a delete out of it.
 *
 * <p>Files are created 0600 and directories 0700 ({@link LocalFiles}): a backup holds every
 * record, and is the node's user's alone.
 */
public final class DirectoryBackupStore implements BackupStore {

    /** Left by {@code mkfs} at the root of a volume, and unreadable to anyone but root. */
    private static final String LOST_AND_FOUND = "lost+found";

    private final Path root;

    public DirectoryBackupStore(Path root) {
        this.root = root.toAbsolutePath().normalize();
    }

    /**
     * Rejects a name that is empty, starts with {@code /}, or has a segment that is empty or starts
     * with a dot: {@code .} and {@code ..} would alias or escape, and dot files are this store's
     * files being written, which listings skip.
     */
    static String checkName(String name) {
        if (!isName(name)) {
            throw new IllegalArgumentException("not an object name (it is empty, or a segment is empty or starts with a dot): " + name);
        }
        return name;
    }

    static boolean isName(String name) {
        return !name.isEmpty() && Arrays.stream(name.split("/", -1)).noneMatch(segment -> segment.isEmpty() || segment.startsWith("."));
    }

    /** A listing's prefix: a name, or a name's start, which may end in {@code /} or be empty. */
    static String checkPrefix(String prefix) {
        int slash = prefix.lastIndexOf('/');
        if (slash >= 0) {
            checkName(prefix.substring(0, slash));
        }
        if (prefix.substring(slash + 1).startsWith(".")) {
            throw new IllegalArgumentException("not a prefix of object names (a segment starts with a dot): " + prefix);
        }
        return prefix;
    }

    /** The object's file: below the root (whatever {@link #checkName} let through), and reached through no link. */
    private Path file(String name) throws IOException {
        Path file = root.resolve(checkName(name)).normalize();
        if (!file.startsWith(root) || file.equals(root)) {
            throw new IllegalArgumentException("not an object name (it leads out of " + root + "): " + name);
        }
        if (linkBetween(root, file.getParent())) {
            throw new IOException("not an object of " + root + " (a folder on its way is a link): " + name);
        }
        return file;
    }

    /** Whether {@code directory}, or a directory between it and {@code base} below which it is, is a link. */
    private static boolean linkBetween(Path base, Path directory) {
        for (Path each = directory; !each.equals(base); each = each.getParent()) {
            if (Files.isSymbolicLink(each)) {
                return true;
            }
        }
        return false;
    }

    @Override
    public void put(String name, InputStream content, long bytes) throws IOException {
        Path file = file(name);
        LocalFiles.createDirectories(file.getParent());
        Path partial = partialBeside(file);
        try {
            try (FileChannel channel = FileChannel.open(partial, Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE),
                    LocalFiles.OWNER_ONLY_FILE)) {
                byte[] buffer = new byte[64 * 1024];
                for (long left = bytes; left > 0; ) {
                    int read = content.read(buffer, 0, (int) Math.min(buffer.length, left));
                    if (read < 0) {
                        throw new IOException("the content of " + file + " ended after " + (bytes - left) + " of " + bytes + " bytes");
                    }
                    ByteBuffer chunk = ByteBuffer.wrap(buffer, 0, read);
                    while (chunk.hasRemaining()) {
                        channel.write(chunk);
                    }
                    left -= read;
                }
                // A backup is for when the machine is lost: on the disk before it counts as stored.
                channel.force(true);
            }
            moveInPlace(partial, file);
        } finally {
            Files.deleteIfExists(partial);
        }
    }

    @Override
    public void putBytes(String name, byte[] content) throws IOException {
        put(name, new ByteArrayInputStream(content), content.length);
    }

    @Override
    public Optional<byte[]> getBytes(String name) throws IOException {
        Path file = file(name);
        if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
            return Optional.empty();
        }
        try {
            return Optional.of(Files.readAllBytes(file));
        } catch (NoSuchFileException e) {
            return Optional.empty(); // deleted since
        }
    }

    @Override
    public void download(String name, Path file) throws IOException {
        Path source = file(name);
        if (!Files.isRegularFile(source, LinkOption.NOFOLLOW_LINKS)) {
            throw new NoSuchFileException(source.toString(), null, "no such object");
        }
        Path target = file.toAbsolutePath();
        Path partial = partialBeside(target);
        try {
            try (InputStream in = Files.newInputStream(source); OutputStream out = LocalFiles.create(partial)) {
                in.transferTo(out);
            }
            moveInPlace(partial, target);
        } finally {
            Files.deleteIfExists(partial);
        }
    }

    @Override
    public List<Stored> list(String prefix) throws IOException {
        checkPrefix(prefix);
        // Only the directory the prefix names can hold matches: a listing of one backup does not
        // walk all the others.
        int slash = prefix.lastIndexOf('/');
        Path base;
        try {
            base = root.toRealPath(); // the walk does not follow links, and a mount point may be one
        } catch (NoSuchFileException e) {
            return List.of();
        }
        Path start = slash < 0 ? base : base.resolve(prefix.substring(0, slash));
        if (!Files.isDirectory(start, LinkOption.NOFOLLOW_LINKS) || linkBetween(base, start)) {
            return List.of();
        }
        List<Stored> found = new ArrayList<>();
        Files.walkFileTree(start, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attributes) {
                String name = dir.getFileName().toString();
                boolean skipped = !dir.equals(start)
                        && (name.startsWith(".") || dir.getParent().equals(base) && name.equals(LOST_AND_FOUND));
                return skipped ? FileVisitResult.SKIP_SUBTREE : FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attributes) {
                if (attributes.isRegularFile() && !file.getFileName().toString().startsWith(".")) {
                    String name = nameOf(base.relativize(file));
                    if (name.startsWith(prefix)) {
                        found.add(new Stored(name, attributes.size()));
                    }
                }
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFileFailed(Path file, IOException error) throws IOException {
                // Renamed into place or deleted since its directory was read (other nodes write to
                // the same volume): not an object now, or listed under its new name if it was one.
                if (error instanceof NoSuchFileException) {
                    return FileVisitResult.CONTINUE;
                }
                throw error;
            }
        });
        found.sort(Comparator.comparing(Stored::name));
        return found;
    }

    private static String nameOf(Path relative) {
        StringBuilder name = new StringBuilder();
        for (Path segment : relative) {
            if (!name.isEmpty()) {
                name.append('/');
            }
            name.append(segment);
        }
        return name.toString();
    }

    @Override
    public void delete(List<String> names) throws IOException {
        List<Path> files = new ArrayList<>();
        for (String name : names) {
            files.add(file(name)); // all or none
        }
        for (Path file : files) {
            if (Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
                Files.deleteIfExists(file);
            }
        }
    }

    /**
     * A name for a file to be written and then renamed to {@code file}: in the same directory, so
     * that the rename is atomic, and a dot file, which listings skip.
     */
    static Path partialBeside(Path file) {
        return file.resolveSibling("." + file.getFileName() + "." + Long.toHexString(ThreadLocalRandom.current().nextLong()) + ".partial");
    }

    static void moveInPlace(Path partial, Path file) throws IOException {
        try {
            Files.move(partial, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            // Some network file systems; the file beside its place still keeps a reader from half of it.
            Files.move(partial, file, StandardCopyOption.REPLACE_EXISTING);
        }
    }

    @Override
    public String describe() {
        return root.toString();
    }

    @Override
    public void close() {
    }
}
