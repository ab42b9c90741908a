package io.ringkv.peer;

import java.util.Optional;

import io.ringkv.storage.Record;
import io.ringkv.storage.RecordCursor;

/**
 * What this node does for its peers: the replica side of the protocol. Every method blocks on
 * storage; {@link PeerServer} calls them on the storage scheduler, never on an event loop.
 */
public interface PeerService {

    /** This node's name on the ring, which the handshake tells every peer. */
    String name();

    /** The newest record this replica holds for the key, tombstones included. */
    Optional<Record> read(byte[] key);

    /** Stores the record unless this replica already holds a newer version of the key. */
    void write(byte[] key, Record record);

    /** This replica's records with {@code start <= key < end} (null end: all), tombstones included. */
    RecordCursor openRange(byte[] start, byte[] end);
}
