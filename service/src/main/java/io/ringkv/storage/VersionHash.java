package io.ringkv.storage;

import com.dynatrace.hash4j.hashing.Hasher64;
import com.dynatrace.hash4j.hashing.Hashing;

/** One 64-bit hash of a key and its version, the unit of a {@link TokenIndex.Digest}. */
final class VersionHash {

    private static final Hasher64 HASH = Hashing.xxh3_64();

    private VersionHash() {
    }

    /** @param tokenKey the token index's key (token, then key); {@code version} its value */
    static long of(byte[] tokenKey, byte[] version) {
        byte[] both = new byte[tokenKey.length + version.length];
        System.arraycopy(tokenKey, 0, both, 0, tokenKey.length);
        System.arraycopy(version, 0, both, tokenKey.length, version.length);
        return HASH.hashBytesToLong(both);
    }
}
