package io.ringkv.security;

import java.util.Optional;

/**
 * What the node's own requests to itself carry in {@code Authorization}: nothing when client
 * authentication is off ({@link #NONE}), else a token of its own ({@link ClientTokens#issue}),
 * revoked when closed.
 */
public record RequestCredential(Optional<String> authorization, Runnable revoke) implements AutoCloseable {

    public static final RequestCredential NONE = new RequestCredential(Optional.empty(), () -> {
    });

    @Override
    public void close() {
        revoke.run();
    }
}
