package io.ringkv.security;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Optional;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.ringkv.config.InvalidSettingException;
import io.ringkv.lifecycle.PeriodicTask;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * The client tokens in force, from the token file, which is read again every
 * {@link #CHECK_EVERY} on a scheduler for blocking work (never an event loop). On Kubernetes the
 * file is a mounted Secret, replaced as a whole when the Secret changes: its content is compared,
 * not its modification time. A new file that cannot be used leaves the tokens as they were, is
 * logged once with why, and counted ({@code ringkv.security.tokens.reload.failures}).
 */
public final class ClientTokens extends PeriodicTask {

    static final Duration CHECK_EVERY = Duration.ofSeconds(5);
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final Logger log = LoggerFactory.getLogger(ClientTokens.class);

    private final Path file;
    private final Scheduler blocking;
    private final Counter reloadFailures;
    private volatile TokenRegistry registry;
    /** Tokens the node made for its own requests to itself ({@link #issue}); no file changes them. */
    private volatile TokenRegistry internal = TokenRegistry.of(List.of());
    /** SHA-256 of the file's content last read, usable or not: a bad file is reported once, not every round. */
    private volatile byte[] lastSeen;

    private ClientTokens(Path file, Scheduler blocking, MeterRegistry meters) {
        this.file = file;
        this.blocking = blocking;
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
        try {
            byte[] content = Files.readAllBytes(file);
            tokens.use(content);
        } catch (IOException e) {
            throw new InvalidSettingException(SecurityProperties.TOKENS_FILE, "cannot read " + file + ": " + e);
        } catch (TokenFile.InvalidTokenFileException e) {
            throw new InvalidSettingException(SecurityProperties.TOKENS_FILE, file + ": " + e.getMessage());
        }
        log.info("client authentication on: {} tokens from {}", tokens.registry.size(), file);
        return tokens;
    }

    /** The client a token belongs to, among the tokens in force. */
    public Optional<Client> find(String token) {
        return registry.find(token).or(() -> internal.find(token));
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

    /**
     * Reads the file and uses it if it changed and is usable. Blocking (file I/O): run on
     * {@link #blocking}, as the rounds do.
     */
    void reload() {
        byte[] content;
        try {
            content = Files.readAllBytes(file);
        } catch (IOException e) {
            refuse(null, "cannot read it: " + e);
            return;
        }
        if (Arrays.equals(TokenRegistry.sha256(content), lastSeen)) {
            return;
        }
        try {
            use(content);
            log.info("client tokens reloaded: {} tokens from {}", registry.size(), file);
        } catch (TokenFile.InvalidTokenFileException e) {
            refuse(content, e.getMessage());
        }
    }

    private void use(byte[] content) {
        registry = TokenRegistry.of(TokenFile.parse(new String(content, StandardCharsets.UTF_8)));
        lastSeen = TokenRegistry.sha256(content);
    }

    private void refuse(byte[] content, String why) {
        byte[] seen = content == null ? new byte[0] : TokenRegistry.sha256(content);
        if (!Arrays.equals(seen, lastSeen)) {
            lastSeen = seen;
            reloadFailures.increment();
            log.warn("client token file {} changed but cannot be used, the {} tokens in force stay: {}", file,
                    registry.size(), why);
        }
    }

    @Override
    protected Disposable begin() {
        return everyPeriod(CHECK_EVERY, blocking, () -> Mono.fromRunnable(this::reload),
                error -> log.warn("checking the client token file {} failed: {}", file, error.toString()))
                .subscribe();
    }
}
