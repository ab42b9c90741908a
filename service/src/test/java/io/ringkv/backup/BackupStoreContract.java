package io.ringkv.backup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.stream.IntStream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.ringkv.backup.BackupStore.Stored;

/**
 * What every {@link BackupStore} does, checked once for all of them: each kind of store extends
 * this with how to open one.
 */
abstract class BackupStoreContract {

    /** Larger than an S3 upload's part, so that the upload is in parts. */
    static final int LARGE = 20 * 1024 * 1024;

    @TempDir
    Path files;

    private final List<BackupStore> opened = new ArrayList<>();

    /**
     * A new, empty store for this test; stores of one test with different locations hold
     * different objects, and no location is a prefix of another's objects.
     */
    abstract BackupStore open(String location) throws IOException;

    /** The store's listings are read in pages of this many names, or in one. */
    int pageSize() {
        return Integer.MAX_VALUE;
    }

    BackupStore store(String location) throws IOException {
        BackupStore store = open(location);
        opened.add(store);
        return store;
    }

    @AfterEach
    void closeStores() {
        opened.forEach(BackupStore::close);
    }

    static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    /** A file of {@code size} bytes that differ from run to run, but that a failure can reproduce. */
    Path randomFile(String name, int size, long seed) throws IOException {
        Path file = files.resolve(name);
        Random random = new Random(seed);
        byte[] chunk = new byte[64 * 1024];
        try (OutputStream out = Files.newOutputStream(file)) {
            for (int left = size; left > 0; left -= chunk.length) {
                random.nextBytes(chunk);
                out.write(chunk, 0, Math.min(left, chunk.length));
            }
        }
        return file;
    }

    @Test
    void streamsALargeFileInAndOutUnchanged() throws IOException {
        BackupStore store = store("large");
        long seed = System.nanoTime();
        Path original = randomFile("original", LARGE, seed);
        try (InputStream in = Files.newInputStream(original)) {
            store.put("data/000001.sst", in, LARGE);
        }
        assertThat(store.list("")).containsExactly(new Stored("data/000001.sst", LARGE));

        Path copy = Files.writeString(files.resolve("copy"), "an older file, replaced");
        store.download("data/000001.sst", copy);
        assertThat(Files.mismatch(original, copy)).as("the first differing byte (seed %d)", seed).isEqualTo(-1);
        try (var left = Files.list(files)) {
            assertThat(left).as("no partial download left beside the file")
                    .containsExactlyInAnyOrder(original, copy);
        }
    }

    @Test
    void storesExactlyTheAnnouncedBytes() throws IOException {
        BackupStore store = store("exact");
        store.put("first-five", new ByteArrayInputStream(bytes("0123456789")), 5);
        assertThat(store.getBytes("first-five")).hasValue(bytes("01234"));

        store.put("empty", InputStream.nullInputStream(), 0);
        assertThat(store.getBytes("empty")).hasValue(new byte[0]);
        assertThat(store.list("")).containsExactly(new Stored("empty", 0), new Stored("first-five", 5));
    }

    @Test
    void storesNothingWhenTheContentEndsEarly() throws IOException {
        BackupStore store = store("short");
        assertThatThrownBy(() -> store.put("small", new ByteArrayInputStream(bytes("abc")), 4))
                .isInstanceOf(IOException.class).hasMessageContaining("ended after 3 of 4 bytes");
        // Ends after the first part of an upload in parts.
        Path tooShort = randomFile("short", 9 * 1024 * 1024, 7);
        try (InputStream in = Files.newInputStream(tooShort)) {
            assertThatThrownBy(() -> store.put("large", in, LARGE)).isInstanceOf(IOException.class)
                    .hasMessageContaining("ended after " + 9 * 1024 * 1024 + " of " + LARGE + " bytes");
        }
        assertThat(store.list("")).isEmpty();
        assertThat(store.getBytes("small")).isEmpty();
        assertThat(store.getBytes("large")).isEmpty();
    }

    @Test
    void keepsSmallObjectsWhole() throws IOException {
        BackupStore store = store("small");
        store.putBytes("backup-1/manifest.json", bytes("{\"files\": 1}"));
        assertThat(store.getBytes("backup-1/manifest.json")).hasValue(bytes("{\"files\": 1}"));

        store.putBytes("backup-1/manifest.json", bytes("{\"files\": 2}"));
        assertThat(store.getBytes("backup-1/manifest.json")).as("replaced").hasValue(bytes("{\"files\": 2}"));
        assertThat(store.list("")).containsExactly(new Stored("backup-1/manifest.json", 12));
    }

    @Test
    void findsNothingUnderANameNotStored() throws IOException {
        BackupStore store = store("missing");
        store.putBytes("present", bytes("x"));
        assertThat(store.getBytes("absent")).isEmpty();
        assertThat(store.getBytes("present/below")).isEmpty();

        Path target = files.resolve("target");
        assertThatThrownBy(() -> store.download("absent", target)).isInstanceOf(NoSuchFileException.class)
                .hasMessageContaining("absent");
        assertThat(target).doesNotExist();
        try (var left = Files.list(files)) {
            assertThat(left).as("no partial download left").isEmpty();
        }
    }

    @Test
    void listsEveryPageInNameOrder() throws IOException {
        BackupStore store = store("paged");
        int count = 20;
        if (pageSize() < count) {
            assertThat(count).as("objects for three pages at least").isGreaterThan(2 * pageSize());
        }
        List<Integer> order = new ArrayList<>(IntStream.range(0, count).boxed().toList());
        Collections.shuffle(order, new Random(3));
        for (int i : order) {
            store.putBytes("sst/%03d.sst".formatted(i), new byte[i]);
        }
        assertThat(store.list("sst/")).containsExactlyElementsOf(
                IntStream.range(0, count).mapToObj(i -> new Stored("sst/%03d.sst".formatted(i), i)).toList());
        assertThat(store.list("sst/01")).extracting(Stored::name)
                .containsExactlyElementsOf(IntStream.range(10, 20).mapToObj("sst/%03d.sst"::formatted).toList());
    }

    @Test
    void listsNamesRelativeToTheStoreAndByPrefix() throws IOException {
        BackupStore store = store("names");
        List<String> names = List.of("b/2", "a/1", "a/10", "a-b", "a/sub/x", "a+b/odd name é%.json", "ab");
        for (String name : names) {
            store.putBytes(name, bytes(name));
        }
        assertThat(store.list("")).extracting(Stored::name)
                .containsExactly("a+b/odd name é%.json", "a-b", "a/1", "a/10", "a/sub/x", "ab", "b/2");
        assertThat(store.list("")).allSatisfy(stored -> assertThat(stored.bytes()).isEqualTo(bytes(stored.name()).length));
        assertThat(store.list("a/")).extracting(Stored::name).containsExactly("a/1", "a/10", "a/sub/x");
        assertThat(store.list("a")).extracting(Stored::name)
                .containsExactly("a+b/odd name é%.json", "a-b", "a/1", "a/10", "a/sub/x", "ab");
        assertThat(store.list("a/s")).extracting(Stored::name).containsExactly("a/sub/x");
        assertThat(store.list("c/")).isEmpty();
        assertThat(store.getBytes("a+b/odd name é%.json")).hasValue(bytes("a+b/odd name é%.json"));
    }

    @Test
    void deletesWhatExistsAndSkipsWhatDoesNot() throws IOException {
        BackupStore store = store("delete");
        for (String name : List.of("old/1", "old/2", "keep")) {
            store.putBytes(name, bytes(name));
        }
        store.delete(List.of("old/1", "never-stored", "old/2", "old/3"));
        assertThat(store.list("")).containsExactly(new Stored("keep", 4));
        assertThat(store.getBytes("old/1")).isEmpty();

        store.delete(List.of());
        store.delete(List.of("old/1"));
        assertThat(store.list("")).containsExactly(new Stored("keep", 4));
    }

    @Test
    void deletesMoreObjectsThanOneRequestTakes() throws IOException {
        BackupStore store = store("many");
        store.putBytes("gone/2500", bytes("x"));
        store.putBytes("kept", bytes("x"));
        store.delete(IntStream.rangeClosed(0, 2500).mapToObj("gone/%04d"::formatted).toList());
        assertThat(store.list("")).extracting(Stored::name).containsExactly("kept");
    }

    @Test
    void listsNoObjectOfAnotherStore() throws IOException {
        BackupStore one = store("one");
        BackupStore other = store("one-more");
        one.putBytes("x", bytes("one"));
        other.putBytes("x", bytes("other"));
        other.putBytes("y", bytes("other"));

        assertThat(one.list("")).containsExactly(new Stored("x", 3));
        assertThat(one.getBytes("x")).hasValue(bytes("one"));
        assertThat(one.getBytes("y")).isEmpty();
        one.delete(List.of("y"));
        assertThat(other.list("")).extracting(Stored::name).containsExactly("x", "y");
    }

    @Test
    void rejectsNamesThatAreNotPlainPaths() throws IOException {
        BackupStore store = store("rejects");
        for (String name : List.of("", "/x", "a//b", "a/", "../x", "a/../b", "a/./b", ".hidden", "a/.partial")) {
            assertThatThrownBy(() -> store.putBytes(name, bytes("x"))).as(name).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> store.getBytes(name)).as(name).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> store.delete(List.of(name))).as(name).isInstanceOf(IllegalArgumentException.class);
        }
        assertThatThrownBy(() -> store.list("../")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> store.list("/")).isInstanceOf(IllegalArgumentException.class);
        assertThat(store.list("")).isEmpty();
    }
}
