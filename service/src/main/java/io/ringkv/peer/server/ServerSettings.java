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

    // Bounds on what one peer can make this node hold. Not settings: they are far above what a
    // member of this cluster ever asks for, and only a broken or hostile peer meets them.

    /**
     * The most bytes of records a range stream may owe its peer at once, whatever credit the peer
     * grants: what it sends before the peer grants more is bounded by this. A member grants its
     * scan window (256 KiB).
     */
    public static final long MAX_CREDIT = 4L << 20;

    /**
     * Token intervals in one DIGEST or RECORD_SCAN: each is a scan of its range on a storage
     * thread. A member asks for 256 at a time; more is refused, not cut short, so the peer learns
     * it asked wrongly.
     */
    public static final int MAX_INTERVALS = 1024;

    /**
     * Connections that have not finished the handshake yet, from everyone together: each costs a
     * channel, a timer and, with TLS, a TLS engine until its handshake timeout. Members connect a
     * few at a time and are through in milliseconds; past this, each new connection closes the
     * oldest one still in the handshake ({@link PeerConnections#startHandshake}).
     */
    public static final int MAX_CONNECTIONS_IN_HANDSHAKE = 64;

    /** The largest frame: the longest key with the largest record, or a full batch. */
    int maxFrame() {
        return Wire.maxFrame(maxKeyLength, maxRecordLength);
    }
}
