package io.ringkv.storage;

/** Too many writes wait for the writer: the node is overloaded, and the caller should come back shortly. */
public final class StorageOverloadedException extends StorageException {

    public StorageOverloadedException(int capacity) {
        super("more than " + capacity + " writes wait for storage");
    }
}
