package io.ringkv.replication;

import java.time.Duration;

/**
 * How this node talks to its peers.
 *
 * @param timeout         the longest a replica call may take before it counts as failed
 * @param maxConnections  the pooled keep-alive connections to each peer
 * @param secret          the shared cluster secret sent on every internal call, or null
 * @param maxKeyLength    the longest key a peer may send in a range stream
 * @param maxValueLength  the largest value a peer may send
 * @param dnsCacheMaxTtl  the longest a peer's address is cached, whatever its DNS record's TTL says:
 *                        a restarted pod comes back with a new address under the same name
 */
public record PeerClientSettings(Duration timeout, int maxConnections, String secret, int maxKeyLength, int maxValueLength,
        Duration dnsCacheMaxTtl) {
}
