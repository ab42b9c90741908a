package io.ringkv.storage;

import io.ringkv.record.KeyedRecord;

/**
 * A forward pass over a replica's records in key order. Blocking, like every storage call: use it
 * off the event loop, from one thread at a time, and close it when done.
 */
public interface RecordCursor extends AutoCloseable {

    /** The next record, or null at the end. */
    KeyedRecord next();

    @Override
    void close();
}
