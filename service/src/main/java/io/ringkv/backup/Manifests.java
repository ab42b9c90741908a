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
 *
 * <p>What is read is hostile input: anyone who can write to the store can write a manifest, and a
 * restore makes local paths and object names of its fields. So a manifest is refused, naming the
 * field, unless every name in it is what this code itself writes there: the backup and node it
 * was read for, a store identity, plain file names, and for each file the object
 * {@link BackupLayout#object} places it in.
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
        String name = BackupLayout.started(id);
        Optional<BackupStarted> started = read(store, name, BackupStarted.class);
        if (started.isPresent()) {
            requireFormat(started.get().format(), BackupStarted.FORMAT, name);
            checkStarted(started.get(), id, refusal(store, name));
        }
        return started;
    }

    static NodeManifest node(BackupStore store, String id, String node) throws IOException {
        String name = BackupLayout.manifest(id, node);
        NodeManifest manifest = read(store, name, NodeManifest.class)
                .orElseThrow(() -> new IOException("no " + name + " in " + store.describe()));
        requireFormat(manifest.format(), NodeManifest.FORMAT, name);
        checkNode(manifest, id, node, refusal(store, name));
        return manifest;
    }

    private static void checkStarted(BackupStarted started, String id, String refusal) throws IOException {
        require(id.equals(started.id()), refusal, "id", started.id(), "the backup's id " + id);
        require(started.members() != null && !started.members().isEmpty(), refusal, "members", started.members(), "a list of members");
        for (int i = 0; i < started.members().size(); i++) {
            String member = started.members().get(i);
            require(BackupLayout.isNodeName(member), refusal, "members[" + i + "]", member, "a member's name");
        }
    }

    private static void checkNode(NodeManifest manifest, String id, String node, String refusal) throws IOException {
        require(id.equals(manifest.backup()), refusal, "backup", manifest.backup(), "the backup's id " + id);
        require(node.equals(manifest.node()), refusal, "node", manifest.node(), "the member " + node);
        require(BackupLayout.isStoreIdentity(manifest.storeIdentity()), refusal, "storeIdentity", manifest.storeIdentity(),
                "a store's identity (a UUID)");
        require(manifest.files() != null, refusal, "files", null, "a list of files");
        for (int i = 0; i < manifest.files().size(); i++) {
            NodeManifest.File file = manifest.files().get(i);
            String field = "files[" + i + "]";
            require(file != null, refusal, field, null, "a file");
            require(BackupLayout.isFileName(file.name()), refusal, field + ".name", file.name(),
                    "a file name (letters, digits, '.', '_' and '-', not starting with '.', at most 128)");
            String object = BackupLayout.object(id, node, manifest.storeIdentity(), file.name());
            require(object.equals(file.object()), refusal, field + ".object", file.object(), object);
        }
    }

    private static String refusal(BackupStore store, String name) {
        return name + " in " + store.describe() + " is refused: its ";
    }

    private static void require(boolean valid, String refusal, String field, Object found, String expected) throws IOException {
        if (!valid) {
            throw new IOException(refusal + field + " is " + (found instanceof String text ? "\"" + text + "\"" : found) + ", not " + expected);
        }
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
