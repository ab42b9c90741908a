package io.ringkv.tls;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.mock.env.MockEnvironment;

/** ringkv.tls.enabled turns on Spring Boot's TLS on the public port, and on the management port only when it is one of its own. */
class TlsServerSettingsTest {

    private static MockEnvironment after(String... settings) {
        MockEnvironment environment = new MockEnvironment();
        for (int i = 0; i < settings.length; i += 2) {
            environment.setProperty(settings[i], settings[i + 1]);
        }
        new TlsServerSettings().postProcessEnvironment(environment, null);
        return environment;
    }

    @Test
    void offChangesNothing() {
        MockEnvironment environment = after("management.server.port", "9090");
        assertThat(environment.getProperty("server.ssl.enabled")).isNull();
        assertThat(environment.getProperty("management.server.ssl.enabled")).isNull();
    }

    @Test
    void onServesTheBundleOnThePublicAndASeparateManagementPort() {
        MockEnvironment environment = after("ringkv.tls.enabled", "true", "server.port", "8080", "management.server.port", "9090");
        assertThat(environment.getProperty("server.ssl.enabled")).isEqualTo("true");
        assertThat(environment.getProperty("server.ssl.bundle")).isEqualTo(TlsBundle.NAME);
        assertThat(environment.getProperty("management.server.ssl.enabled")).isEqualTo("true");
        assertThat(environment.getProperty("management.server.ssl.bundle")).isEqualTo(TlsBundle.NAME);
    }

    @Test
    void aSharedManagementPortGetsNoSettingsOfItsOwn() {
        assertThat(after("ringkv.tls.enabled", "true").getProperty("management.server.ssl.enabled")).isNull();
        assertThat(after("ringkv.tls.enabled", "true", "server.port", "8080", "management.server.port", "8080")
                .getProperty("management.server.ssl.enabled")).isNull();
        assertThat(after("ringkv.tls.enabled", "true", "management.server.port", "-1")
                .getProperty("management.server.ssl.enabled")).as("Actuator off HTTP").isNull();
    }
}
