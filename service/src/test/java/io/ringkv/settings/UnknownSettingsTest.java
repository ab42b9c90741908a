package io.ringkv.settings;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

import io.ringkv.security.SecurityProperties;
import io.ringkv.tls.TlsProperties;

/** A setting no part of the node reads stops it, named with the nearest one it knows. */
class UnknownSettingsTest {

    /** Every ringkv prefix of the node, each bound by a class of its own package, as in the node. */
    @Configuration(proxyBeanMethods = false)
    @EnableConfigurationProperties({ RingkvProperties.class, TlsProperties.class, SecurityProperties.class })
    static class Settings {
    }

    @TempDir
    Path dir;

    private ApplicationContextRunner node(String... settings) {
        return new ApplicationContextRunner()
                .withUserConfiguration(Settings.class, UnknownSettings.class)
                .withPropertyValues("ringkv.data-dir=" + dir.resolve("data"))
                .withPropertyValues(settings);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "ringkv.cluster.ports=7070 | Unknown setting ringkv.cluster.ports (did you mean ringkv.cluster.port?)",
            "ringkv.replication.factr=3 | Unknown setting ringkv.replication.factr (did you mean ringkv.replication.factor?)",
            "ringkv.tls.enable=true | Unknown setting ringkv.tls.enable (did you mean ringkv.tls.enabled?)",
            "ringkv.security.token-file=/x | Unknown setting ringkv.security.token-file (did you mean ringkv.security.tokens-file?)",
            "ringkv.datadir2=/x | Unknown setting ringkv.datadir2 (did you mean ringkv.data-dir?)" })
    void anUnknownSettingStopsTheNodeNamingTheNearest(String setting, String expected) {
        node(setting).run(context -> {
            assertThat(context).hasFailed();
            FailureAnalysis analysis = new InvalidSettingFailureAnalyzer().analyze(context.getStartupFailure());
            assertThat(analysis).as("reported: %s", context.getStartupFailure()).isNotNull();
            assertThat(analysis.getDescription()).isEqualTo(expected);
        });
    }

    @Test
    void everyKnownSettingInAnyOfItsFormsIsAccepted() {
        node("ringkv.cluster.port=7000", "ringkv.cluster.peers[0]=http://127.0.0.1:8080", "ringkv.maxValueSize=1MB",
                "ringkv.health.breaker.window-size=10", "ringkv.tls.check-interval=5s",
                "ringkv.security.tokens-missing-grace=10s", "ringkv.security.throttle.failures=5")
                .run(context -> assertThat(context).hasNotFailed());
    }

    /** The environment holds variables for other programs too (a user's RINGKV_TOKEN for curl). */
    @Test
    void environmentVariablesAreNotChecked() {
        node().withInitializer(context -> context.getEnvironment().getPropertySources().replace(
                StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME,
                new SystemEnvironmentPropertySource(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME,
                        Map.of("RINGKV_TOKEN", "a-token", "RINGKV_CLUSTER_ZONE", "a"))))
                .run(context -> assertThat(context).hasNotFailed());
    }

    @Test
    void theEditDistanceCountsCharactersInsertedDeletedOrReplaced() {
        assertThat(UnknownSettings.editDistance("zone", "port")).isEqualTo(3);
        assertThat(UnknownSettings.editDistance("factr", "factor")).isEqualTo(1);
        assertThat(UnknownSettings.editDistance("", "abc")).isEqualTo(3);
        assertThat(UnknownSettings.editDistance("same", "same")).isZero();
    }
}
