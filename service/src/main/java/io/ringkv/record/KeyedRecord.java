package io.ringkv.record;

/** A record together with its key, as a range scan yields it. Keys compare as unsigned bytes. */
public record KeyedRecord(byte[] key, Record record) {

    /**
     * The longest key, in bytes: one limit for clients and peers alike, so that whatever one node
     * accepted every other node accepts too (a key only some nodes take could never be repaired).
     */
    public static final int MAX_KEY_BYTES = 1024;
}
