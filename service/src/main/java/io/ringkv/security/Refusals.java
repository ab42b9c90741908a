package io.ringkv.security;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.security.web.server.ServerAuthenticationEntryPoint;
import org.springframework.security.web.server.authentication.ServerAuthenticationFailureHandler;
import org.springframework.security.web.server.authorization.ServerAccessDeniedHandler;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.ringkv.logging.RateLimitedLog;
import reactor.core.publisher.Mono;

/**
 * The answers to a request that is refused: 401 with {@code WWW-Authenticate: Bearer} when the
 * token is missing or unknown, 403 when the client's role is not enough, 400 for a token in the
 * query string, 429 with {@code Retry-After} to an address that sent too many unknown tokens
 * ({@link FailedTokenThrottle}); each with a short JSON problem body, like the framework's other errors. Every
 * refusal is counted by reason ({@code ringkv.security.failed.attempts}) and logged at most once
 * per {@link #LOG_EVERY}; a token is never logged.
 */
final class Refusals {

    static final Duration LOG_EVERY = Duration.ofSeconds(10);
    static final String REALM = "Bearer realm=\"ringkv\"";
    private static final Logger log = LoggerFactory.getLogger(Refusals.class);

    /** Why a request was refused: the metric's one tag, a bounded set. */
    enum Reason {
        MISSING_TOKEN(HttpStatus.UNAUTHORIZED, REALM,
                "This request needs a client token: send it as 'Authorization: Bearer <token>'."),
        UNKNOWN_TOKEN(HttpStatus.UNAUTHORIZED, REALM + ", error=\"invalid_token\"",
                "The bearer token is not one of this cluster's client tokens."),
        QUERY_TOKEN(HttpStatus.BAD_REQUEST, null,
                "A token in the query string is refused, since URLs are logged: send it as 'Authorization: Bearer <token>'."),
        FORBIDDEN(HttpStatus.FORBIDDEN, null, "The client token's role does not allow this request."),
        THROTTLED(HttpStatus.TOO_MANY_REQUESTS, null,
                "Too many unknown tokens from this address: its tokens are not checked until Retry-After has passed.");

        final HttpStatus status;
        final String challenge;
        final byte[] body;

        Reason(HttpStatus status, String challenge, String detail) {
            this.status = status;
            this.challenge = challenge;
            // The detail is a constant without quotes or backslashes: no escaping needed.
            this.body = ("{\"type\":\"about:blank\",\"title\":\"" + status.getReasonPhrase() + "\",\"status\":" + status.value()
                    + ",\"detail\":\"" + detail + "\"}").getBytes(StandardCharsets.UTF_8);
        }

        String tag() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    private final Map<Reason, Counter> counters = new EnumMap<>(Reason.class);
    private final RateLimitedLog logLimit = new RateLimitedLog(LOG_EVERY, System::nanoTime);
    private final FailedTokenThrottle throttle;

    Refusals(MeterRegistry meters, FailedTokenThrottle throttle) {
        this.throttle = throttle;
        for (Reason reason : Reason.values()) {
            counters.put(reason, Counter.builder("ringkv.security.failed.attempts")
                    .description("Requests refused for a missing, unknown or misplaced client token, a role that is not enough, "
                            + "or too many unknown tokens from the address")
                    .tag("reason", reason.tag())
                    .register(meters));
        }
    }

    /** No token where one is needed. */
    ServerAuthenticationEntryPoint missingToken() {
        return (exchange, error) -> refuse(exchange, Reason.MISSING_TOKEN);
    }

    /** A token that is not known, or one in the query string. */
    ServerAuthenticationFailureHandler badToken() {
        return (filterExchange, error) -> error instanceof BearerTokens.QueryStringTokenException
                ? refuse(filterExchange.getExchange(), Reason.QUERY_TOKEN)
                : unknownToken(filterExchange.getExchange());
    }

    /** A token that is not one of the client tokens: it counts against its address. */
    Mono<Void> unknownToken(ServerWebExchange exchange) {
        String address = addressOf(exchange);
        if (address != null) {
            throttle.failed(address);
        }
        return refuse(exchange, Reason.UNKNOWN_TOKEN);
    }

    /**
     * Ahead of the token check: a request with a token from an address that sent too many unknown
     * ones is refused without checking it. Requests without a token go on, to be decided as ever.
     */
    WebFilter throttled() {
        return (exchange, chain) -> ifThrottled(exchange).orElseGet(() -> chain.filter(exchange));
    }

    /** The refusal of a request with a token from a throttled address, if it is one. */
    Optional<Mono<Void>> ifThrottled(ServerWebExchange exchange) {
        if (!throttle.refusesAny()) {
            return Optional.empty();
        }
        String address = addressOf(exchange);
        if (address == null || !exchange.getRequest().getHeaders().containsHeader(HttpHeaders.AUTHORIZATION)) {
            return Optional.empty();
        }
        return throttle.refusedFor(address).map(left -> {
            // Whole seconds, rounded up: a client that waits that long is let through.
            long seconds = Math.max(1, left.plusNanos(999_999_999).toSeconds());
            exchange.getResponse().getHeaders().set(HttpHeaders.RETRY_AFTER, Long.toString(seconds));
            return refuse(exchange, Reason.THROTTLED);
        });
    }

    /** The client's IP address, as the connection shows it (a proxy's headers are not trusted). */
    private static String addressOf(ServerWebExchange exchange) {
        var remote = exchange.getRequest().getRemoteAddress();
        return remote == null || remote.getAddress() == null ? null : remote.getAddress().getHostAddress();
    }

    /** A known token whose role is not enough. */
    ServerAccessDeniedHandler forbidden() {
        return (exchange, denied) -> refuse(exchange, Reason.FORBIDDEN);
    }

    Mono<Void> refuse(ServerWebExchange exchange, Reason reason) {
        counters.get(reason).increment();
        long suppressed = logLimit.record();
        var request = exchange.getRequest();
        if (suppressed >= 0) {
            var from = request.getRemoteAddress();
            log.warn("refused {} {} from {}: {} ({} more refused since the last such line)", request.getMethod(),
                    printable(request.getPath().value()), from == null ? "?" : from.getHostString(),
                    reason.tag(), suppressed);
        }
        var response = exchange.getResponse();
        response.setStatusCode(reason.status);
        response.getHeaders().setContentType(MediaType.APPLICATION_PROBLEM_JSON);
        if (reason.challenge != null) {
            response.getHeaders().set(HttpHeaders.WWW_AUTHENTICATE, reason.challenge);
        }
        return response.writeWith(Mono.fromSupplier(() -> response.bufferFactory().wrap(reason.body)));
    }

    /** A request path as it may be logged: bounded, without control characters. */
    private static String printable(String path) {
        String shown = path.length() > 200 ? path.substring(0, 200) + "..." : path;
        return shown.replaceAll("\\p{Cntrl}", "?");
    }
}
