package io.ringkv.security;

import java.nio.file.Path;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Client authentication (see docs/security.md and docs/configuration.md).
 *
 * @param enabled    whether clients need a token: off, every route is open as before
 * @param tokensFile the client token file, one {@code token role [name]} per line; re-read when it changes
 */
@ConfigurationProperties("ringkv.security")
public record SecurityProperties(boolean enabled, Path tokensFile) {

    public static final String TOKENS_FILE = "ringkv.security.tokens-file";
}
