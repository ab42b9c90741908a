package io.ringkv.api;

import java.time.Duration;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.reactor.netty.NettyServerCustomizer;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

import io.ringkv.settings.RingkvProperties;

/** The public API's settings and its drain on shutdown; its routes are {@link ApiRoutes}. */
@Configuration(proxyBeanMethods = false)
public class ApiConfiguration {

    /**
     * On SIGTERM, clients are told to go elsewhere before the web server stops taking requests;
     * the requests then in progress get Spring's limit for a shutdown phase to finish.
     */
    @Bean
    ClientDrain clientDrain(RingkvProperties properties, ApplicationEventPublisher events, Environment environment,
            @Value("${spring.lifecycle.timeout-per-shutdown-phase:30s}") Duration phaseTimeout) {
        return new ClientDrain(properties.shutdown().drainDelay(), phaseTimeout,
                () -> environment.getRequiredProperty("local.server.port", Integer.class), events);
    }

    @Bean
    NettyServerCustomizer clientDrainTracking(ClientDrain clientDrain) {
        return clientDrain.tracking();
    }

    @Bean
    ApiRoutes.Settings apiSettings(RingkvProperties properties) {
        return new ApiRoutes.Settings(properties.maxValueBytes(), properties.overload().bodyTimeout(), properties.maxTtl());
    }
}
