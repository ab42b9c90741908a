package io.ringkv.security;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.Set;

import org.springframework.http.HttpHeaders;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.AuthenticationException;
import org.springframework.security.web.server.authentication.ServerAuthenticationConverter;
import org.springframework.web.server.ServerWebExchange;

import reactor.core.publisher.Mono;

/**
 * Finds a request's token in its {@code Authorization: Bearer} header, and nowhere else. A token
 * in the query string is refused rather than ignored: URLs end up in access logs, proxies'
 * logs and shell histories, and a client that sends one there must learn it at once.
 */
final class BearerTokens implements ServerAuthenticationConverter {

    /** The query parameters OAuth 2 (RFC 6750) and common clients put a token in. */
    static final Set<String> QUERY_PARAMETERS = Set.of("access_token", "token");
    private static final String SCHEME = "Bearer ";

    /** The request carried a token in its query string. */
    static final class QueryStringTokenException extends AuthenticationException {
        QueryStringTokenException() {
            super("a token in the query string is refused");
        }
    }

    @Override
    public Mono<Authentication> convert(ServerWebExchange exchange) {
        try {
            // No token: the request is anonymous, and the access rules decide whether it may go on.
            return Mono.justOrEmpty(presented(exchange.getRequest())).map(ClientAuthentication::presented);
        } catch (QueryStringTokenException inQuery) {
            return Mono.error(inQuery);
        }
    }

    /**
     * The token a request presents in its {@code Authorization: Bearer} header; none without one.
     *
     * @throws QueryStringTokenException if the request carries a token in its query string
     */
    static Optional<String> presented(ServerHttpRequest request) {
        if (carriesToken(request.getURI().getRawQuery())) {
            throw new QueryStringTokenException();
        }
        String header = request.getHeaders().getFirst(HttpHeaders.AUTHORIZATION);
        if (header == null || !header.regionMatches(true, 0, SCHEME, 0, SCHEME.length())) {
            return Optional.empty();
        }
        return Optional.of(header.substring(SCHEME.length()).strip());
    }

    /**
     * Whether a raw query string names one of {@link #QUERY_PARAMETERS}, spelled plainly or
     * percent-encoded. Read from the raw string rather than the request's parsed parameters:
     * through Spring Security's firewall those are checked anew on every call, and most queries
     * here are one short {@code id=}.
     */
    static boolean carriesToken(String rawQuery) {
        // Every name refused contains "token", and a spelling that decodes to one contains a '%'.
        if (rawQuery == null || rawQuery.indexOf('%') < 0 && !rawQuery.contains("token")) {
            return false;
        }
        for (String parameter : rawQuery.split("&")) {
            int equals = parameter.indexOf('=');
            String name = equals < 0 ? parameter : parameter.substring(0, equals);
            if (QUERY_PARAMETERS.contains(name) || QUERY_PARAMETERS.contains(decoded(name))) {
                return true;
            }
        }
        return false;
    }

    private static String decoded(String name) {
        if (name.indexOf('%') < 0 && name.indexOf('+') < 0) {
            return name;
        }
        try {
            return URLDecoder.decode(name, StandardCharsets.UTF_8);
        } catch (IllegalArgumentException badEncoding) {
            // Not a name the application could read either: the firewall or the route refuses it.
            return name;
        }
    }
}
