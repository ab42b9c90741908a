package io.ringkv.tls;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.core.Ordered;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * With {@code ringkv.tls.enabled}, tells Spring Boot to serve the public port, and the management
 * port when it is a port of its own, with the node's certificate ({@link TlsBundle}): one
 * setting for every port instead of Spring Boot's {@code server.ssl.*} and
 * {@code management.server.ssl.*}. Spring Boot refuses management SSL settings when Actuator
 * shares the public port, hence the condition. Runs after the settings are loaded.
 */
public class TlsServerSettings implements EnvironmentPostProcessor, Ordered {

    @Override
    public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
        if (!environment.getProperty("ringkv.tls.enabled", Boolean.class, false)) {
            return;
        }
        Map<String, Object> settings = new LinkedHashMap<>();
        settings.put("server.ssl.enabled", "true");
        settings.put("server.ssl.bundle", TlsBundle.NAME);
        String managementPort = environment.getProperty("management.server.port");
        String serverPort = environment.getProperty("server.port", "8080");
        if (managementPort != null && !managementPort.equals("-1") && !Objects.equals(managementPort, serverPort)) {
            settings.put("management.server.ssl.enabled", "true");
            settings.put("management.server.ssl.bundle", TlsBundle.NAME);
        }
        environment.getPropertySources().addLast(new MapPropertySource("ringkv.tls", settings));
    }

    @Override
    public int getOrder() {
        return Ordered.LOWEST_PRECEDENCE;
    }
}
