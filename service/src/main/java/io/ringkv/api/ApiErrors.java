package io.ringkv.api;

import java.util.List;
import java.util.concurrent.RejectedExecutionException;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.core.Ordered;
import org.springframework.http.codec.HttpMessageWriter;
import org.springframework.web.reactive.function.server.HandlerFunction;
import org.springframework.web.reactive.function.server.HandlerStrategies;
import org.springframework.web.reactive.function.server.ServerResponse;
import org.springframework.web.reactive.result.view.ViewResolver;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebExceptionHandler;

import io.ringkv.overload.OverloadedException;
import io.ringkv.replication.NotEnoughReplicasException;
import io.ringkv.ring.RingNotKnownException;
import io.ringkv.storage.StorageException;
import io.ringkv.storage.StorageOverloadedException;
import reactor.core.publisher.Mono;

/**
 * Maps a route's failures to short plain-text answers. The client learns what was wrong; a node
 * problem is a 503 the client may retry, never a 500 that tells it nothing.
 */
final class ApiErrors {

    private static final Logger log = LoggerFactory.getLogger(ApiErrors.class);
    static final String OVERLOADED = "Service Unavailable: the node is overloaded, retry later";
    static final String RING_NOT_KNOWN = "Service Unavailable: this node has not found the other members of its cluster yet, retry later";

    private ApiErrors() {
    }

    /** The handler with its failures answered. */
    static HandlerFunction<ServerResponse> mapped(HandlerFunction<ServerResponse> handler) {
        return request -> {
            try {
                return handler.handle(request).onErrorResume(ApiErrors::answer);
            } catch (RuntimeException e) {
                // Thrown while reading the request, before any Mono: a bad parameter, most often.
                return answer(e);
            }
        };
    }

    static Mono<ServerResponse> answer(Throwable error) {
        if (error instanceof BadRequestException bad) {
            return plain(bad.status(), bad.getMessage());
        }
        if (error instanceof NotEnoughReplicasException) {
            log.debug("504: {}", error.getMessage());
            return plain(HttpStatus.GATEWAY_TIMEOUT, "Not Enough Replicas");
        }
        if (error instanceof RejectedExecutionException || error instanceof StorageOverloadedException
                || error instanceof OverloadedException) {
            // A storage queue is full, or too many bytes are in flight: the client should come back shortly.
            return overloaded();
        }
        if (error instanceof RetryLaterException later) {
            return retryLater("Service Unavailable: " + later.getMessage());
        }
        if (error instanceof RingNotKnownException) {
            // Still starting: a moment later (or another node) can answer.
            return retryLater(RING_NOT_KNOWN);
        }
        if (error instanceof StorageException) {
            log.warn("storage failure: {}", error.getMessage());
            return plain(HttpStatus.SERVICE_UNAVAILABLE, "Service Unavailable: " + error.getMessage());
        }
        return Mono.error(error);
    }

    static Mono<ServerResponse> overloaded() {
        return retryLater(OVERLOADED);
    }

    private static Mono<ServerResponse> retryLater(String message) {
        return ServerResponse.status(HttpStatus.SERVICE_UNAVAILABLE)
                .header(HttpHeaders.RETRY_AFTER, "1")
                .contentType(MediaType.TEXT_PLAIN)
                .bodyValue(message);
    }

    static Mono<ServerResponse> plain(HttpStatus status, String message) {
        return ServerResponse.status(status).contentType(MediaType.TEXT_PLAIN).bodyValue(message);
    }

    /**
     * A range's body is a stream that the framework subscribes to after its route returned: a node
     * that cannot be reached fails it then. Until the first chunk is sent, that failure still gets
     * the route's answer (504 for a missing node); later, the response is cut off.
     */
    static final class BeforeFirstChunk implements WebExceptionHandler, Ordered {

        private static final HandlerStrategies STRATEGIES = HandlerStrategies.withDefaults();
        private static final ServerResponse.Context CONTEXT = new ServerResponse.Context() {
            @Override
            public List<HttpMessageWriter<?>> messageWriters() {
                return STRATEGIES.messageWriters();
            }

            @Override
            public List<ViewResolver> viewResolvers() {
                return STRATEGIES.viewResolvers();
            }
        };

        @Override
        public int getOrder() {
            // Before Spring Boot's own error handler (-1), which would answer 500.
            return -2;
        }

        @Override
        public Mono<Void> handle(ServerWebExchange exchange, Throwable error) {
            if (ConnectionHooks.answeredBelow(exchange)) {
                // Reactor Netty answered 400 to the broken framing already: the handler's own 400
                // fails to start, and nothing is wrong but the client's request.
                return Mono.empty();
            }
            if (exchange.getResponse().isCommitted()) {
                return Mono.error(error);
            }
            return answer(error).flatMap(response -> response.writeTo(exchange, CONTEXT));
        }
    }
}
