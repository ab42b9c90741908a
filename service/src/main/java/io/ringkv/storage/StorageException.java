package io.ringkv.storage;

/** The store could not do what was asked: it is closed, or RocksDB reported an error. */
public class StorageException extends RuntimeException {
    public StorageException(String message) {
        super(message);
    }

    public StorageException(String message, Throwable cause) {
        super(message, cause);
    }
}
