package io.ringkv.storage;

/** Too many writes, or too many bytes, wait for the writer: the node is overloaded, and the caller should come back shortly. */
public final class StorageOverloadedException extends StorageException {

    public StorageOverloadedException(String message) {
        super(message);
    }
}
