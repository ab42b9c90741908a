package io.ringkv.overload;

/** The node cannot take this request now; the client should retry shortly (503, Retry-After). */
public final class OverloadedException extends RuntimeException {

    public OverloadedException(String message) {
        super(message, null, false, false);
    }
}
