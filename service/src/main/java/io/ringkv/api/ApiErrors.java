package io.ringkv.api;

import java.util.concurrent.RejectedExecutionException;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.server.MissingRequestValueException;

import io.ringkv.replication.NotEnoughReplicasException;
import io.ringkv.storage.RecordCodec;
import io.ringkv.storage.StorageException;

/**
 * Maps failures to short plain-text answers. The client learns what was wrong; a node problem is
 * a 503 the client may retry, never a 500 that tells it nothing.
 */
@RestControllerAdvice
public class ApiErrors {

    private static final Logger log = LoggerFactory.getLogger(ApiErrors.class);

    @ExceptionHandler
    public ResponseEntity<String> badRequest(BadRequestException error) {
        return plain(error.status(), error.getMessage());
    }

    @ExceptionHandler
    public ResponseEntity<String> missingParameter(MissingRequestValueException error) {
        return plain(HttpStatus.BAD_REQUEST, "the '" + error.getName() + "' parameter is required");
    }

    @ExceptionHandler
    public ResponseEntity<String> malformedRecord(RecordCodec.MalformedRecordException error) {
        return plain(HttpStatus.BAD_REQUEST, "malformed record: " + error.getMessage());
    }

    @ExceptionHandler
    public ResponseEntity<String> notEnoughReplicas(NotEnoughReplicasException error) {
        log.debug("504: {}", error.getMessage());
        return plain(HttpStatus.GATEWAY_TIMEOUT, "Not Enough Replicas");
    }

    /** The storage queue is full: this node is overloaded, and the client should come back shortly. */
    @ExceptionHandler
    public ResponseEntity<String> overloaded(RejectedExecutionException error) {
        return ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE)
                .header(HttpHeaders.RETRY_AFTER, "1")
                .contentType(MediaType.TEXT_PLAIN)
                .body("Service Unavailable: the node is overloaded, retry later");
    }

    @ExceptionHandler
    public ResponseEntity<String> storage(StorageException error) {
        log.warn("storage failure: {}", error.getMessage());
        return plain(HttpStatus.SERVICE_UNAVAILABLE, "Service Unavailable: " + error.getMessage());
    }

    private static ResponseEntity<String> plain(HttpStatus status, String message) {
        return ResponseEntity.status(status).contentType(MediaType.TEXT_PLAIN).body(message);
    }
}
