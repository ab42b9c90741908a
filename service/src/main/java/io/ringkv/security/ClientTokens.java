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
import java.util.function.LongSupplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.ringkv.lifecycle.WatchedFiles;
import io.ringkv.settings.InvalidSettingException;
import reactor.core.scheduler.Scheduler;

/**
 * The client tokens in force, from the token file, read again every {@link #CHECK_EVERY}
 * ({@link WatchedFiles}). On Kubernetes the file is a mounted Secret, replaced as a whole when the
 * Secret changes. Only a SHA-256 of the file is kept to compare it, as only hashes of the tokens
 * are.
 *
 * <p>A file that reads whole is the truth: emptied of tokens, it refuses every client token (an
 * operator's way to revoke them all), logged and visible as {@code ringkv.security.tokens} 0. A
 * file with a bad line leaves the tokens as they were, since a typo must not lock every client
 * out; it is logged once with why and counted ({@code ringkv.security.tokens.reload.failures}).
 * A file gone or unreadable keeps the tokens for {@code tokensMissingGrace}, long enough for a
 * Secret volume's swap, and then refuses every client token until it is back.
 */
public final class ClientTokens extends WatchedFiles<byte[], ClientTokens.FileTokens> {

    static final Duration CHECK_EVERY = Duration.ofSeconds(5);
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final Logger log = LoggerFactory.getLogger(ClientTokens.class);

    /** The tokens of a file, and the fingerprint of the content they were made from. */
    record FileTokens(TokenRegistry tokens, Object fingerprint) {
    }

    private final Path file;
    private final Duration missingGrace;
    private final LongSupplier nanoClock;
    private final Counter reloadFailures;
    /** Tokens the node made for its own requests to itself ({@link #issue}); no file changes them. */
    private volatile TokenRegistry internal = TokenRegistry.of(List.of());
    /** When reads of the file began to fail ({@link #nanoClock}); null while it reads. */
    private volatile Long unreadableSince;
    /** The file has been unreadable for longer than {@link #missingGrace}: its tokens are refused. */
    private volatile boolean revoked;

    private ClientTokens(Path file, Duration missingGrace, Scheduler blocking, MeterRegistry meters, LongSupplier nanoClock) {
        super(CHECK_EVERY, blocking);
        this.file = file;
        this.missingGrace = missingGrace;
        this.nanoClock = nanoClock;
        this.reloadFailures = Counter.builder("ringkv.security.tokens.reload.failures")
                .description("Changes of the client token file that could not be used; the tokens in force stayed")
                .register(meters);
        Gauge.builder("ringkv.security.tokens", this, ClientTokens::inForce)
                .description("Client tokens in force from the token file; 0 when it was emptied or has been gone too long")
                .register(meters);
    }

    /**
     * Reads the token file at start; a node that is to check tokens does not start without usable
     * ones, since it would refuse every client.
     */
    public static ClientTokens load(Path file, Duration missingGrace, Scheduler blocking, MeterRegistry meters) {
        return load(file, missingGrace, blocking, meters, System::nanoTime);
    }

    static ClientTokens load(Path file, Duration missingGrace, Scheduler blocking, MeterRegistry meters, LongSupplier nanoClock) {
        if (file == null) {
            throw new InvalidSettingException(SecurityProperties.TOKENS_FILE, "not set; ringkv.security.enabled needs a token file");
        }
        var tokens = new ClientTokens(file, missingGrace, blocking, meters, nanoClock);
        TokenRegistry registry;
        try {
            registry = tokens.load().tokens();
        } catch (UncheckedIOException e) {
            throw new InvalidSettingException(SecurityProperties.TOKENS_FILE, "cannot read " + file + ": " + e.getCause());
        } catch (TokenFile.InvalidTokenFileException e) {
            throw new InvalidSettingException(SecurityProperties.TOKENS_FILE, file + ": " + e.getMessage());
        }
        if (registry.size() == 0) {
            throw new InvalidSettingException(SecurityProperties.TOKENS_FILE,
                    file + ": no tokens in it (one 'token role [name]' per line)");
        }
        log.info("client authentication on: {} tokens from {}", registry.size(), file);
        return tokens;
    }

    /** The client a token belongs to, among the tokens in force. */
    public Optional<Client> find(String token) {
        Optional<Client> fromFile = revoked ? Optional.empty() : current().tokens().find(token);
        return fromFile.or(() -> internal.find(token));
    }

    /** How many tokens of the file are in force. */
    int inForce() {
        return revoked ? 0 : current().tokens().size();
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
        byte[] content;
        try {
            content = Files.readAllBytes(file);
        } catch (IOException e) {
            unreadable();
            throw new UncheckedIOException("cannot read it: " + e, e);
        }
        unreadableSince = null;
        if (revoked && fingerprint(content).equals(current().fingerprint())) {
            // The file in force before it went is back: no new content for check() to take.
            revoked = false;
            log.warn("client token file {} is back: its {} tokens are in force again", file, inForce());
        }
        return content;
    }

    private void unreadable() {
        long now = nanoClock.getAsLong();
        Long since = unreadableSince;
        if (since == null) {
            unreadableSince = now;
            since = now;
        }
        if (!revoked && now - since >= missingGrace.toNanos()) {
            revoked = true;
            log.warn("client token file {} has been unreadable for {} ({}): every client token is refused until it is back",
                    file, missingGrace, SecurityProperties.TOKENS_MISSING_GRACE);
        }
    }

    @Override
    protected Object fingerprint(byte[] content) {
        return ByteBuffer.wrap(TokenRegistry.sha256(content));
    }

    @Override
    protected FileTokens make(byte[] content) {
        return new FileTokens(TokenRegistry.of(TokenFile.parse(new String(content, StandardCharsets.UTF_8))), fingerprint(content));
    }

    @Override
    protected void taken(FileTokens before, FileTokens after) {
        revoked = false;
        if (after.tokens().size() == 0) {
            log.warn("client token file {} has no tokens: every client token is refused", file);
        } else {
            log.info("client tokens reloaded: {} tokens from {}", after.tokens().size(), file);
        }
    }

    @Override
    protected void refused(String why, FileTokens inForce) {
        reloadFailures.increment();
        log.warn("client token file {} changed but cannot be used, the {} tokens in force stay{}: {}", file, inForce(),
                revoked || unreadableSince == null ? "" : " for at most " + missingGrace + " (" + SecurityProperties.TOKENS_MISSING_GRACE + ")",
                why);
    }
}
