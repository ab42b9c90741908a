package io.ringkv.security;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.security.authentication.BadCredentialsException;
import org.springframework.security.authentication.ReactiveAuthenticationManager;
import org.springframework.security.core.Authentication;
import org.springframework.security.config.observation.SecurityObservationSettings;
import org.springframework.security.config.web.server.SecurityWebFiltersOrder;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.web.server.SecurityWebFilterChain;
import org.springframework.security.web.server.WebFilterChainProxy;
import org.springframework.security.web.server.authentication.AuthenticationWebFilter;
import org.springframework.security.web.server.context.NoOpServerSecurityContextRepository;
import org.springframework.security.web.server.firewall.ServerWebExchangeFirewall;
import org.springframework.security.web.server.firewall.StrictServerWebExchangeFirewall;
import org.springframework.security.web.server.savedrequest.NoOpServerRequestCache;
import org.springframework.security.web.server.util.matcher.ServerWebExchangeMatcher;

import io.micrometer.core.instrument.MeterRegistry;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * Client authentication and authorization with Spring Security's WebFlux support. One filter
 * chain serves the public port and, when Actuator has a port of its own, that one too (its
 * context is a child of this one and takes the same filters).
 *
 * <p>Off ({@code ringkv.security.enabled=false}), the chain matches no request: every route is
 * open and answered exactly as without Spring Security. On, a request is authenticated by its
 * bearer token alone and decided by {@link AccessRules}. What Spring Security offers for browsers
 * is left out: form login, HTTP Basic, logout, CSRF (no cookies, so nothing a browser would send
 * on its own), sessions and saved requests. The token manager defined here also keeps Spring Boot
 * from generating a default user and logging its password.
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(SecurityProperties.class)
public class SecurityConfiguration {

    @Bean
    SecurityWebFilterChain clientAccess(ServerHttpSecurity http, SecurityProperties settings,
            ReactiveAuthenticationManager tokenManager, ObjectProvider<Refusals> refusalsWhenOn) {
        http.httpBasic(ServerHttpSecurity.HttpBasicSpec::disable)
                .formLogin(ServerHttpSecurity.FormLoginSpec::disable)
                .logout(ServerHttpSecurity.LogoutSpec::disable)
                .csrf(ServerHttpSecurity.CsrfSpec::disable)
                .anonymous(ServerHttpSecurity.AnonymousSpec::disable)
                .requestCache(cache -> cache.requestCache(NoOpServerRequestCache.getInstance()))
                .securityContextRepository(NoOpServerSecurityContextRepository.getInstance());
        if (!settings.enabled()) {
            return http.securityMatcher(exchange -> ServerWebExchangeMatcher.MatchResult.notMatch())
                    .headers(ServerHttpSecurity.HeaderSpec::disable)
                    .build();
        }
        Refusals refusals = refusalsWhenOn.getObject();
        var bearer = new AuthenticationWebFilter(tokenManager);
        bearer.setServerAuthenticationConverter(new BearerTokens());
        bearer.setAuthenticationFailureHandler(refusals.badToken());
        // The security headers (Cache-Control, X-Frame-Options, HSTS...) are for browsers; a
        // key-value API's clients are programs, and writing them cost heap on every answer.
        return http.securityMatcher(exchange -> DataRouteAccess.decided(exchange)
                        ? ServerWebExchangeMatcher.MatchResult.notMatch()
                        : ServerWebExchangeMatcher.MatchResult.match())
                .headers(ServerHttpSecurity.HeaderSpec::disable)
                .addFilterBefore(refusals.throttled(), SecurityWebFiltersOrder.AUTHENTICATION)
                .addFilterAt(bearer, SecurityWebFiltersOrder.AUTHENTICATION)
                .exceptionHandling(handling -> handling.authenticationEntryPoint(refusals.missingToken())
                        .accessDeniedHandler(refusals.forbidden()))
                .authorizeExchange(exchanges -> exchanges.anyExchange().access(new RouteAuthorization()))
                .build();
    }

    /** The refusals' counters and the throttle of unknown tokens, one for the data routes and the chain. */
    @Bean
    @ConditionalOnBooleanProperty("ringkv.security.enabled")
    Refusals refusals(SecurityProperties settings, MeterRegistry meters) {
        var throttle = settings.throttle();
        return new Refusals(meters,
                new FailedTokenThrottle(throttle.failures(), throttle.window(), throttle.addresses(), System::nanoTime));
    }

    /** The data routes' bearer check, ahead of the chain. */
    @Bean
    @ConditionalOnBooleanProperty("ringkv.security.enabled")
    DataRouteAccess dataRouteAccess(ClientTokens clientTokens, Refusals refusals) {
        return new DataRouteAccess(clientTokens, refusals);
    }

    /**
     * Spring Security would observe the chain, each of its filters, the authentication and the
     * authorization of every request: wrappers that cost CPU and heap on each one even with their
     * observations turned off by property. The failed attempts have a counter of their own
     * ({@code ringkv.security.failed.attempts}) and every request is timed already
     * ({@code ringkv.client.requests}).
     */
    @Bean
    SecurityObservationSettings noSecurityObservations() {
        return SecurityObservationSettings.noObservations();
    }

    /** Spring Security's filters run without a checkpoint each ({@link FilterSequence}). */
    @Bean
    static BeanPostProcessor securityFiltersInSequence() {
        return new BeanPostProcessor() {
            @Override
            public Object postProcessAfterInitialization(Object bean, String name) {
                if (bean instanceof WebFilterChainProxy proxy) {
                    proxy.setFilterChainDecorator(new FilterSequence());
                }
                return bean;
            }
        };
    }

    /**
     * Off, Spring Security's firewall must not answer either: it refuses some spellings of a path
     * (a {@code ;}, an encoded character) with its own 400 before any chain is asked, where the
     * node answers them as it always has.
     */
    @Bean
    @ConditionalOnBooleanProperty(name = "ringkv.security.enabled", havingValue = false, matchIfMissing = true)
    ServerWebExchangeFirewall noFirewallWhenOff() {
        return ServerWebExchangeFirewall.INSECURE_NOOP;
    }

    /**
     * On, it stays in front of {@link AccessRules}, but for the requests {@link DataRouteAccess}
     * decided: their path is one of two exact spellings and their method one of four, so no rule
     * can be reached by an odd path, which is what the firewall guards; its other checks, of each
     * header and parameter as the route reads them, would wrap every data request's exchange, and
     * the data routes answer the same bytes as they do with security off.
     */
    @Bean
    @ConditionalOnBooleanProperty("ringkv.security.enabled")
    ServerWebExchangeFirewall firewallBesideDataRoutes() {
        var strict = new StrictServerWebExchangeFirewall();
        return exchange -> DataRouteAccess.decided(exchange) ? Mono.just(exchange) : strict.getFirewalledExchange(exchange);
    }

    /** The tokens, read at start and again when their file changes; only when clients need them. */
    @Bean
    @ConditionalOnBooleanProperty("ringkv.security.enabled")
    ClientTokens clientTokens(SecurityProperties settings, MeterRegistry meters) {
        return ClientTokens.load(settings.tokensFile(), settings.tokensMissingGrace(), Schedulers.boundedElastic(), meters);
    }

    /** Finds a presented token among the client tokens; with security off, there are none to find. */
    @Bean
    ReactiveAuthenticationManager tokenManager(ObjectProvider<ClientTokens> clientTokens) {
        ClientTokens tokens = clientTokens.getIfAvailable();
        if (tokens == null) {
            return authentication -> Mono.error(new BadCredentialsException("client authentication is off"));
        }
        return authentication -> Mono.justOrEmpty(((ClientAuthentication) authentication).token())
                .flatMap(token -> Mono.justOrEmpty(tokens.find(token)))
                .<Authentication>map(ClientAuthentication::of)
                .switchIfEmpty(Mono.error(() -> new BadCredentialsException("unknown token")));
    }
}
