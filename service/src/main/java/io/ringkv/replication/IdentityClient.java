package io.ringkv.replication;

import java.net.URI;
import java.time.Duration;

import org.springframework.web.reactive.function.client.WebClient;

import reactor.core.publisher.Mono;

/** Asks a node at an address, not yet known by name, for its name on the ring. */
public final class IdentityClient {

    private final WebClient client;
    private final Duration timeout;

    public IdentityClient(String secret, Duration timeout) {
        WebClient.Builder builder = WebClient.builder();
        if (secret != null) {
            builder.defaultHeader(InternalApi.SECRET_HEADER, secret);
        }
        this.client = builder.build();
        this.timeout = timeout;
    }

    public Mono<String> identify(URI baseUrl) {
        return client.get().uri(baseUrl.resolve(InternalApi.IDENTITY)).retrieve().bodyToMono(String.class).timeout(timeout);
    }
}
