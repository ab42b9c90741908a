package io.ringkv.backup;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * Where backups are kept: an S3-compatible object store ({@link S3BackupStore}) or a mounted
 * directory ({@link DirectoryBackupStore}), as named objects under one prefix. Every call
 * blocks, and runs on a thread that may (never an event loop). Object names use {@code /} as the
 * separator and never start with one.
 */
public interface BackupStore extends AutoCloseable {

    /** An object and its size in bytes, as a listing reports it. */
    record Stored(String name, long bytes) {
    }

    /** Stores {@code bytes} bytes read from {@code content} as the object {@code name}, replacing any. */
    void put(String name, InputStream content, long bytes) throws IOException;

    /** Stores a small object whole (a manifest). */
    void putBytes(String name, byte[] content) throws IOException;

    /** A small object whole, or empty if there is none of that name. */
    Optional<byte[]> getBytes(String name) throws IOException;

    /** Copies the object into {@code file}, replacing it; fails if there is no such object. */
    void download(String name, Path file) throws IOException;

    /** Every object whose name starts with {@code prefix}, in name order. */
    List<Stored> list(String prefix) throws IOException;

    /** Removes the objects; names that do not exist are skipped. */
    void delete(List<String> names) throws IOException;

    /** Where the objects go, for messages: a URI without credentials. */
    String describe();

    @Override
    void close();
}
