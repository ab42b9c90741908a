package io.ringkv.overload;

/** The node cannot take this request now; the client should retry shortly (503, Retry-After). */
public final class OverloadedException extends RuntimeException {

    public OverloadedException(String message) {
        super(message, null, false, false);
    }

    /** No room in ringkv.overload.max-bytes-in-flight: for a write's body and a read's answers alike. */
    public static OverloadedException bytesInFlight() {
        return new OverloadedException("too many bytes of values in flight (ringkv.overload.max-bytes-in-flight)");
    }
}
