package io.ringkv.peer.server;

import java.time.Duration;

import io.ringkv.peer.wire.Handshake;
import io.ringkv.peer.wire.Wire;

/**
 * How this node answers its peers on the cluster port ({@link PeerServer}).
 *
 * @param port              the cluster port; 0 takes a free one
 * @param handshake         the proof of the cluster secret
 * @param maxKeyLength      the longest key a peer may send
 * @param maxRecordLength   the largest record a peer may send
 * @param maxRequests       requests from peers in progress at once; past it their connections are read no further for now
 * @param maxBytes          bytes of values in peers' reads and writes this node holds at once: a
 *                          write's from its frame to its store, a read's from the store to its
 *                          answer's frame written; bounded apart from the clients' values, as
 *                          requests are
 * @param readWait          how long a read's answer may wait on a storage thread for room in
 *                          maxBytes before it is refused as overloaded: the peers' replication
 *                          timeout, after which they no longer wait for it
 * @param handshakeTimeout  how long a new connection has to prove the secret
 */
public record ServerSettings(int port, Handshake handshake, int maxKeyLength, int maxRecordLength, int maxRequests,
        long maxBytes, Duration readWait, Duration handshakeTimeout) {

    /** The largest frame: the longest key with the largest record, or a full batch. */
    int maxFrame() {
        return Wire.maxFrame(maxKeyLength, maxRecordLength);
    }
}
