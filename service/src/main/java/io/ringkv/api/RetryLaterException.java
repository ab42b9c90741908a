package io.ringkv.api;

/**
 * The cluster cannot serve this request as it is now, and will soon (a rolling upgrade under
 * way): 503 with Retry-After and the message, which says what it waits for. Nothing was changed.
 */
public final class RetryLaterException extends RuntimeException {

    public RetryLaterException(String message) {
        super(message, null, false, false);
    }
}
