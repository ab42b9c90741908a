package io.ringkv.peer.client;

import java.time.Duration;

import io.ringkv.peer.wire.Handshake;

/**
 * How this node connects to its peers and what it accepts from them ({@link PeerConnector}).
 *
 * @param self               this node's name on the ring, which it tells every peer
 * @param handshake          the proof of the cluster secret
 * @param timeout            the longest a call (connecting included) may take
 * @param connectionsPerPeer persistent connections to each peer; requests are spread over them
 * @param scanWindow         bytes of records a peer may send ahead on a range stream
 * @param maxKeyLength       the longest key a peer may send
 * @param maxRecordLength    the largest record a peer may send
 * @param dnsCacheMaxTtl     the longest a peer's address is cached, whatever its DNS record's TTL
 *                           says: a restarted pod comes back with a new address under the same name
 * @param clusterPort        the port this node answers peers on, which its pings tell them (0: not told)
 */
public record ConnectionSettings(String self, Handshake handshake, Duration timeout, int connectionsPerPeer, int scanWindow,
        int maxKeyLength, int maxRecordLength, Duration dnsCacheMaxTtl, int clusterPort) {
}
