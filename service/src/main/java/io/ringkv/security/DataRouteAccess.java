package io.ringkv.security;

import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

import org.springframework.core.Ordered;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

import io.ringkv.security.AccessRules.Access;
import reactor.core.publisher.Mono;

/**
 * The bearer check of the data routes, at the cost of a hash lookup. Spring Security's chain
 * (throttle, token converter, authentication, exception translation, authorization, each a filter
 * with its Reactor operators) cost a plain request 30-65 µs of CPU and 10-11 KiB of heap, a fifth
 * of what the node spends on it; the data routes carry nearly all of a node's requests. So a
 * request to one of them is decided here, before that chain, with the same parts in the same
 * order: the throttle of {@link Refusals}, the token of {@link BearerTokens}, the client of
 * {@link ClientTokens}, the rule of {@link AccessRules}, the answers of {@link Refusals}. The chain
 * and its firewall let a request decided here pass ({@link #decided}); every other route, the
 * management port's included, is still Spring Security's.
 *
 * <p>Only the exact paths are taken, as the request wrote them, with the methods the routes serve:
 * a path the firewall would look at twice (encoded, with a {@code ;}, a {@code //}) is not one of
 * them, so it is the chain's and its firewall's as before.
 */
final class DataRouteAccess implements WebFilter, Ordered {

    private static final Set<String> PATHS = Set.of("/v0/entity", "/v0/entities");
    private static final Set<String> METHODS = Set.of("GET", "HEAD", "PUT", "DELETE");
    /** What each method needs on each path, by path then method: looked up, not matched rule by rule, per request. */
    private static final Map<String, Map<String, Access>> REQUIRED = PATHS.stream().collect(Collectors.toUnmodifiableMap(
            path -> path, path -> METHODS.stream().collect(Collectors.toUnmodifiableMap(method -> method,
                    method -> AccessRules.required(method, path)))));
    private static final String DECIDED = DataRouteAccess.class.getName() + ".decided";
    /** Where Spring Security's chain runs: WebFluxSecurityConfiguration.WEB_FILTER_CHAIN_FILTER_ORDER, in a class that is not public. */
    private static final int SPRING_SECURITY_ORDER = -100;

    private final ClientTokens tokens;
    private final Refusals refusals;

    DataRouteAccess(ClientTokens tokens, Refusals refusals) {
        this.tokens = tokens;
        this.refusals = refusals;
    }

    /** Whether this filter decided the request: Spring Security's chain and firewall leave it be. */
    static boolean decided(ServerWebExchange exchange) {
        return exchange.getAttribute(DECIDED) != null;
    }

    /** Just ahead of Spring Security's chain, behind the filters that see every request (the drain). */
    @Override
    public int getOrder() {
        return SPRING_SECURITY_ORDER - 1;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        var request = exchange.getRequest();
        String path = request.getPath().value();
        String method = request.getMethod().name();
        Map<String, Access> byMethod = REQUIRED.get(path);
        Access access = byMethod == null ? null : byMethod.get(method);
        if (access == null) {
            return chain.filter(exchange);
        }
        exchange.getAttributes().put(DECIDED, Boolean.TRUE);
        Optional<Mono<Void>> throttled = refusals.ifThrottled(exchange);
        if (throttled.isPresent()) {
            return throttled.get();
        }
        Optional<String> token;
        try {
            token = BearerTokens.presented(request);
        } catch (BearerTokens.QueryStringTokenException inQuery) {
            return refusals.refuse(exchange, Refusals.Reason.QUERY_TOKEN);
        }
        Optional<Client> client = token.flatMap(tokens::find);
        if (token.isPresent() && client.isEmpty()) {
            return refusals.unknownToken(exchange);
        }
        if (AccessRules.allows(access, client)) {
            return chain.filter(exchange);
        }
        return refusals.refuse(exchange, client.isEmpty() ? Refusals.Reason.MISSING_TOKEN : Refusals.Reason.FORBIDDEN);
    }
}
