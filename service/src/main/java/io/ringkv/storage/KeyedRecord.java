package io.ringkv.storage;

/** A record together with its key, as a range scan yields it. Keys compare as unsigned bytes. */
public record KeyedRecord(byte[] key, Record record) {
}
