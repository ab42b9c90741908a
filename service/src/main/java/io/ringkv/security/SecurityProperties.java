package io.ringkv.security;

import java.nio.file.Path;
import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

import jakarta.validation.Valid;
import jakarta.validation.constraints.Positive;
import jakarta.validation.constraints.PositiveOrZero;

/**
 * Client authentication (see docs/security.md and docs/configuration.md).
 *
 * @param enabled            whether clients need a token: off, every route is open as before
 * @param tokensFile         the client token file, one {@code token role [name]} per line; re-read when it changes
 * @param tokensMissingGrace how long the tokens stay in force while the file cannot be read (gone,
 *                           or a Secret volume caught mid-swap); after it, every client token is
 *                           refused until the file is back
 * @param throttle           how unknown tokens from one client address are slowed down
 */
@Validated
@ConfigurationProperties("ringkv.security")
public record SecurityProperties(boolean enabled, Path tokensFile,
        @DefaultValue("60s") @PositiveOrZero Duration tokensMissingGrace, @DefaultValue @Valid Throttle throttle) {

    public static final String TOKENS_FILE = "ringkv.security.tokens-file";
    static final String TOKENS_MISSING_GRACE = "ringkv.security.tokens-missing-grace";

    /**
     * @param failures  unknown tokens an address may send within {@code window} of its first;
     *                  past them, its requests with a token get 429 until the window ends
     * @param window    how long an address's failures are counted together, and refused for
     * @param addresses how many addresses are remembered at most (bounded memory); the least
     *                  recently failed are forgotten first
     */
    public record Throttle(@DefaultValue("10") @Positive int failures, @DefaultValue("1m") @Positive Duration window,
            @DefaultValue("10000") @Positive int addresses) {
    }
}
