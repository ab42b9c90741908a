package io.ringkv.api;

import org.springframework.http.HttpStatus;

/** The client's request is wrong; the message tells it what to fix. Nothing was changed. */
public final class BadRequestException extends RuntimeException {

    private final HttpStatus status;

    public BadRequestException(HttpStatus status, String message) {
        super(message, null, false, false);
        this.status = status;
    }

    public BadRequestException(String message) {
        this(HttpStatus.BAD_REQUEST, message);
    }

    public HttpStatus status() {
        return status;
    }
}
