package io.ringkv.tls;

import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;

import io.ringkv.peer.client.ClientSecurity;
import io.ringkv.peer.server.PeerServerCustomizer;
import io.ringkv.ring.ClusterMembership;

/** TLS on every port when {@code ringkv.tls.enabled}; without it, none of these beans exist and the node speaks plaintext. */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(TlsProperties.class)
public class TlsConfiguration {

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnProperty(prefix = "ringkv.tls", name = "enabled", havingValue = "true")
    static class Enabled {

        @Bean
        TlsCertificates tlsCertificates(TlsProperties settings) {
            return new TlsCertificates(settings);
        }

        @Bean
        TlsBundle tlsBundle(TlsCertificates certificates) {
            return new TlsBundle(certificates);
        }

        @Bean
        ClientSecurity clientTls(TlsCertificates certificates) {
            return new PeerClientTls(certificates);
        }

        /**
         * Last, so that the TLS handler is first in the pipeline whatever other customizers add.
         * The members are the ring's: those joining or leaving are on it too (their rings of
         * movement are made of its members).
         */
        @Bean
        @Order(Ordered.LOWEST_PRECEDENCE)
        PeerServerCustomizer peerServerTls(TlsCertificates certificates, ClusterMembership membership) {
            return new PeerServerTls(certificates, () -> membership.ring().names());
        }
    }
}
