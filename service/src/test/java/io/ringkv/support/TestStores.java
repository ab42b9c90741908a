package io.ringkv.support;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

import io.ringkv.record.LastWriteWins;
import io.ringkv.ring.HashRing;
import io.ringkv.storage.RocksStore;
import io.ringkv.storage.StorageSettings;

/** A store in a test's directory, as a node opens it, with a small block cache. */
public final class TestStores {

    private TestStores() {
    }

    public static RocksStore open(Path dir) {
        return RocksStore.open(new StorageSettings(dir, 8 * 1024 * 1024, false, 10_000, 64L << 20, 64L << 20, HashRing::token, 21_600), LastWriteWins.ORDER);
    }

    public static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
