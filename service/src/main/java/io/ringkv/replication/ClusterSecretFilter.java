package io.ringkv.replication;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

import reactor.core.publisher.Mono;

/**
 * Guards the internal endpoints: when the cluster has a secret, a call without it gets 403. The
 * public API is not affected. The comparison takes the same time whatever the guess, so the secret
 * cannot be found a byte at a time by timing.
 */
public final class ClusterSecretFilter implements WebFilter {

    private final byte[] secret;

    public ClusterSecretFilter(String secret) {
        this.secret = secret.getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        if (!exchange.getRequest().getPath().value().startsWith(InternalApi.PREFIX)) {
            return chain.filter(exchange);
        }
        String presented = exchange.getRequest().getHeaders().getFirst(InternalApi.SECRET_HEADER);
        if (presented != null && MessageDigest.isEqual(secret, presented.getBytes(StandardCharsets.UTF_8))) {
            return chain.filter(exchange);
        }
        var response = exchange.getResponse();
        response.setStatusCode(HttpStatus.FORBIDDEN);
        response.getHeaders().setContentType(MediaType.TEXT_PLAIN);
        DataBuffer body = response.bufferFactory().wrap(
                "Forbidden: internal endpoints need the cluster secret\n".getBytes(StandardCharsets.UTF_8));
        return response.writeWith(Mono.just(body));
    }
}
