package io.ringkv.replication;

/** Fewer than {@code ack} replicas answered in time. The client gets 504. */
public final class NotEnoughReplicasException extends RuntimeException {
    public NotEnoughReplicasException(String message) {
        super(message, null, false, false);
    }
}
