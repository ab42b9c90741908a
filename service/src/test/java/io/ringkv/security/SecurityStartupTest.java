package io.ringkv.security;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.security.autoconfigure.ReactiveUserDetailsServiceAutoConfiguration;
import org.springframework.boot.security.autoconfigure.web.reactive.ReactiveWebSecurityAutoConfiguration;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.security.core.userdetails.ReactiveUserDetailsService;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.ringkv.settings.InvalidSettingFailureAnalyzer;

/** What a node with security on needs to start, and what Spring Security must not add on its own. */
class SecurityStartupTest {

    @TempDir
    Path dir;

    private final ReactiveWebApplicationContextRunner node = new ReactiveWebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(ReactiveWebSecurityAutoConfiguration.class,
                    ReactiveUserDetailsServiceAutoConfiguration.class))
            .withUserConfiguration(SecurityConfiguration.class)
            .withBean(MeterRegistry.class, SimpleMeterRegistry::new);

    @Test
    void securityOnNeedsAUsableTokenFile() throws IOException {
        assertRefused("ringkv.security.tokens-file=", "Invalid setting ringkv.security.tokens-file: not set");
        assertRefused("ringkv.security.tokens-file=" + dir.resolve("absent"), "Invalid setting ringkv.security.tokens-file: cannot read");
        Path bad = Files.writeString(dir.resolve("bad"), "0123456789abcdef0123 root\n");
        assertRefused("ringkv.security.tokens-file=" + bad, "Invalid setting ringkv.security.tokens-file: " + bad
                + ": line 1: unknown role 'root'");
        Path good = Files.writeString(dir.resolve("good"), "0123456789abcdef0123 admin\n");
        node.withPropertyValues("ringkv.security.enabled=true", "ringkv.security.tokens-file=" + good)
                .run(context -> assertThat(context).hasNotFailed().hasSingleBean(ClientTokens.class));
    }

    /** Off, there is no token file to read; on or off, no generated user and password (nor its log line). */
    @Test
    void securityOffReadsNoTokensAndNoDefaultUserIsMade() {
        node.run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(ClientTokens.class)
                .doesNotHaveBean(ReactiveUserDetailsService.class));
    }

    private void assertRefused(String tokensFile, String expected) {
        node.withPropertyValues("ringkv.security.enabled=true", tokensFile).run(context -> {
            assertThat(context).hasFailed();
            var analysis = new InvalidSettingFailureAnalyzer().analyze(context.getStartupFailure());
            assertThat(analysis).as("a bad setting, reported: %s", context.getStartupFailure()).isNotNull();
            assertThat(analysis.getDescription()).startsWith(expected);
        });
    }
}
