package io.ringkv.peer.message;

/**
 * What this node accepts from a peer in a frame, on either side of a connection.
 *
 * @param maxKeyLength    the longest key
 * @param maxRecordLength the largest record
 */
public record FrameLimits(int maxKeyLength, int maxRecordLength) {
}
