package io.ringkv.security;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The tokens clients may present, kept only as SHA-256 hashes: a heap dump shows no token. A
 * presented token is hashed and compared with every known hash in constant time
 * ({@link MessageDigest#isEqual}), and the loop never stops early, so the time taken tells neither
 * which token nearly matched nor where in the list the match was.
 */
public final class TokenRegistry {

    private record Known(byte[] hash, Client client) {
    }

    private final List<Known> known;

    private TokenRegistry(List<Known> known) {
        this.known = known;
    }

    public static TokenRegistry of(List<TokenFile.Grant> grants) {
        return new TokenRegistry(grants.stream().map(grant -> new Known(sha256(grant.token().getBytes(StandardCharsets.UTF_8)), grant.client())).toList());
    }

    /** This registry and one more token. */
    TokenRegistry with(String token, Client client) {
        var more = new ArrayList<>(known);
        more.add(new Known(sha256(token.getBytes(StandardCharsets.UTF_8)), client));
        return new TokenRegistry(List.copyOf(more));
    }

    /** This registry without a token. */
    TokenRegistry without(String token) {
        byte[] hash = sha256(token.getBytes(StandardCharsets.UTF_8));
        return new TokenRegistry(known.stream().filter(entry -> !MessageDigest.isEqual(entry.hash(), hash)).toList());
    }

    /** The client the token belongs to, if it is known. */
    public Optional<Client> find(String token) {
        byte[] presented = sha256(token.getBytes(StandardCharsets.UTF_8));
        Client found = null;
        for (Known entry : known) {
            if (MessageDigest.isEqual(entry.hash(), presented)) {
                found = entry.client();
            }
        }
        return Optional.ofNullable(found);
    }

    public int size() {
        return known.size();
    }

    /**
     * One digest a thread, reused: every data request hashes its token, and looking the algorithm
     * up among the providers ({@link MessageDigest#getInstance}) cost ten times the hashing.
     * {@link MessageDigest#digest(byte[])} leaves it reset for the next.
     */
    private static final ThreadLocal<MessageDigest> SHA_256 = ThreadLocal.withInitial(() -> {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    });

    static byte[] sha256(byte[] bytes) {
        return SHA_256.get().digest(bytes);
    }
}
