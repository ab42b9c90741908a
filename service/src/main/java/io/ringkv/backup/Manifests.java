package io.ringkv.backup;

import java.io.IOException;
import java.util.Optional;

import tools.jackson.core.JacksonException;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.json.JsonMapper;

/**
 * Reads and writes a backup's JSON objects ({@link BackupStarted}, {@link NodeManifest}) in a
 * {@link BackupStore}. A newer version's extra fields are ignored; its format number is what a
 * reader checks.
 */
final class Manifests {

    private static final JsonMapper JSON = JsonMapper.builder()
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .build();

    private Manifests() {
    }

    static void write(BackupStore store, String name, Object manifest) throws IOException {
        store.putBytes(name, JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(manifest));
    }

    static Optional<BackupStarted> started(BackupStore store, String id) throws IOException {
        Optional<BackupStarted> started = read(store, BackupLayout.started(id), BackupStarted.class);
        started.ifPresent(read -> requireFormat(read.format(), BackupStarted.FORMAT, BackupLayout.started(id)));
        return started;
    }

    static NodeManifest node(BackupStore store, String id, String node) throws IOException {
        String name = BackupLayout.manifest(id, node);
        NodeManifest manifest = read(store, name, NodeManifest.class)
                .orElseThrow(() -> new IOException("no " + name + " in " + store.describe()));
        requireFormat(manifest.format(), NodeManifest.FORMAT, name);
        return manifest;
    }

    private static <T> Optional<T> read(BackupStore store, String name, Class<T> type) throws IOException {
        Optional<byte[]> bytes = store.getBytes(name);
        if (bytes.isEmpty()) {
            return Optional.empty();
        }
        try {
            return Optional.of(JSON.readValue(bytes.get(), type));
        } catch (JacksonException e) {
            throw new IOException(name + " in " + store.describe() + " is not readable: " + e.getOriginalMessage(), e);
        }
    }

    private static void requireFormat(int found, int known, String name) {
        if (found != known) {
            throw new IllegalStateException(name + " has format " + found + "; this version reads format " + known);
        }
    }
}
