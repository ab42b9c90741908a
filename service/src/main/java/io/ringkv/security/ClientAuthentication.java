package io.ringkv.security;

import java.util.List;

import org.springframework.security.authentication.AbstractAuthenticationToken;

/**
 * A request's bearer token: presented (not yet checked, {@link #presented}) or, once found in the
 * token file, the client it belongs to ({@link #of}). Only the presented form holds the token,
 * and only until it is checked.
 */
final class ClientAuthentication extends AbstractAuthenticationToken {

    private final transient String token;
    private final Client client;

    private ClientAuthentication(String token, Client client) {
        super(List.of());
        this.token = token;
        this.client = client;
        setAuthenticated(client != null);
    }

    static ClientAuthentication presented(String token) {
        return new ClientAuthentication(token, null);
    }

    static ClientAuthentication of(Client client) {
        return new ClientAuthentication(null, client);
    }

    String token() {
        return token;
    }

    /** The client, once the token is found. */
    Client client() {
        return client;
    }

    @Override
    public Object getCredentials() {
        return token;
    }

    @Override
    public Object getPrincipal() {
        return client;
    }

    @Override
    public String getName() {
        return client == null ? "unchecked bearer token" : client.name();
    }

    @Override
    public String toString() {
        return "ClientAuthentication[" + getName() + "]";
    }
}
