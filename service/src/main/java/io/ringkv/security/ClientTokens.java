package io.ringkv.security;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Optional;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.ringkv.config.InvalidSettingException;
import io.ringkv.lifecycle.WatchedFiles;
import reactor.core.scheduler.Scheduler;

/**
 * The client tokens in force, from the token file, read again every {@link #CHECK_EVERY}
 * ({@link WatchedFiles}). On Kubernetes the file is a mounted Secret, replaced as a whole when the
 * Secret changes. Only a SHA-256 of the file is kept to compare it, as only hashes of the tokens
 * are. A new file that cannot be used leaves the tokens as they were, is logged once with why,
 * and counted ({@code ringkv.security.tokens.reload.failures}).
 */
public final class ClientTokens extends WatchedFiles<byte[], TokenRegistry> {

    static final Duration CHECK_EVERY = Duration.ofSeconds(5);
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final Logger log = LoggerFactory.getLogger(ClientTokens.class);

    private final Path file;
    private final Counter reloadFailures;
    /** Tokens the node made for its own requests to itself ({@link #issue}); no file changes them. */
    private volatile TokenRegistry internal = TokenRegistry.of(List.of());

    private ClientTokens(Path file, Scheduler blocking, MeterRegistry meters) {
        super(CHECK_EVERY, blocking);
        this.file = file;
        this.reloadFailures = Counter.builder("ringkv.security.tokens.reload.failures")
                .description("Changes of the client token file that could not be used; the tokens in force stayed")
                .register(meters);
    }

    /**
     * Reads the token file at start; a node that is to check tokens does not start without usable
     * ones, since it would refuse every client.
     */
    public static ClientTokens load(Path file, Scheduler blocking, MeterRegistry meters) {
        if (file == null) {
            throw new InvalidSettingException(SecurityProperties.TOKENS_FILE, "not set; ringkv.security.enabled needs a token file");
        }
        var tokens = new ClientTokens(file, blocking, meters);
        TokenRegistry registry;
        try {
            registry = tokens.load();
        } catch (UncheckedIOException e) {
            throw new InvalidSettingException(SecurityProperties.TOKENS_FILE, "cannot read " + file + ": " + e.getCause());
        } catch (TokenFile.InvalidTokenFileException e) {
            throw new InvalidSettingException(SecurityProperties.TOKENS_FILE, file + ": " + e.getMessage());
        }
        log.info("client authentication on: {} tokens from {}", registry.size(), file);
        return tokens;
    }

    /** The client a token belongs to, among the tokens in force. */
    public Optional<Client> find(String token) {
        return current().find(token).or(() -> internal.find(token));
    }

    /**
     * A token for the node's own requests to itself (the warm-up before it reports ready): 32
     * random bytes, never written anywhere, valid until the credential is closed.
     */
    public synchronized RequestCredential issue(String name, Role role) {
        byte[] random = new byte[32];
        RANDOM.nextBytes(random);
        String token = Base64.getUrlEncoder().withoutPadding().encodeToString(random);
        internal = internal.with(token, new Client(name, role));
        return new RequestCredential(Optional.of("Bearer " + token), () -> revoke(token));
    }

    private synchronized void revoke(String token) {
        internal = internal.without(token);
    }

    @Override
    protected byte[] read() {
        try {
            return Files.readAllBytes(file);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read it: " + e, e);
        }
    }

    @Override
    protected Object fingerprint(byte[] content) {
        return ByteBuffer.wrap(TokenRegistry.sha256(content));
    }

    @Override
    protected TokenRegistry make(byte[] content) {
        return TokenRegistry.of(TokenFile.parse(new String(content, StandardCharsets.UTF_8)));
    }

    @Override
    protected void taken(TokenRegistry before, TokenRegistry after) {
        log.info("client tokens reloaded: {} tokens from {}", after.size(), file);
    }

    @Override
    protected void refused(String why, TokenRegistry inForce) {
        reloadFailures.increment();
        log.warn("client token file {} changed but cannot be used, the {} tokens in force stay: {}", file, inForce.size(), why);
    }
}
