package io.ringkv.tls;

import java.util.Collection;
import java.util.HashSet;
import java.util.Set;

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

        /** Last, so that the TLS handler is first in the pipeline whatever other customizers add. */
        @Bean
        @Order(Ordered.LOWEST_PRECEDENCE)
        PeerServerCustomizer peerServerTls(TlsCertificates certificates, ClusterMembership membership) {
            return new PeerServerTls(certificates, () -> members(membership.view()));
        }

        /** Every member of any of this node's rings: a member joining or leaving still talks to the others. */
        private static Collection<String> members(ClusterMembership.View view) {
            Set<String> members = new HashSet<>(view.ring().members());
            members.addAll(view.current().members());
            members.addAll(view.future().members());
            members.addAll(view.joining().keySet());
            return members;
        }
    }
}
