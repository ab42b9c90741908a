package io.ringkv.security;

import java.util.Optional;

import org.springframework.security.authorization.AuthorizationDecision;
import org.springframework.security.authorization.AuthorizationResult;
import org.springframework.security.authorization.ReactiveAuthorizationManager;
import org.springframework.security.core.Authentication;
import org.springframework.security.web.server.authorization.AuthorizationContext;

import reactor.core.publisher.Mono;

/** Spring Security's view of {@link AccessRules}: the one decision for every request, on any port. */
final class RouteAuthorization implements ReactiveAuthorizationManager<AuthorizationContext> {

    @Override
    public Mono<AuthorizationResult> authorize(Mono<Authentication> authentication, AuthorizationContext context) {
        var request = context.getExchange().getRequest();
        var access = AccessRules.required(request.getMethod().name(), request.getPath().value());
        return authentication
                .map(found -> found instanceof ClientAuthentication client ? Optional.ofNullable(client.client()) : Optional.<Client>empty())
                .defaultIfEmpty(Optional.empty())
                .map(client -> new AuthorizationDecision(AccessRules.allows(access, client)));
    }
}
