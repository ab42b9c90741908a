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
 */
public record PeerClientSettings(Duration timeout, int maxConnections, String secret, int maxKeyLength, int maxValueLength) {
}
