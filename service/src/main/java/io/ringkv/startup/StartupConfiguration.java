package io.ringkv.startup;

import java.util.Optional;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

import io.ringkv.peer.client.ClientSecurity;
import io.ringkv.replication.Coordinator;
import io.ringkv.replication.ReplicaDirectory;
import io.ringkv.ring.ClusterMembership;
import io.ringkv.security.ClientTokens;
import io.ringkv.security.RequestCredential;
import io.ringkv.security.Role;
import io.ringkv.settings.RingkvProperties;

/** The warm-up a node runs through its own API before it says it is ready. */
@Configuration(proxyBeanMethods = false)
public class StartupConfiguration {

    @Bean
    WarmUp warmUp(Coordinator coordinator, ClusterMembership membership, ReplicaDirectory replicaDirectory,
            RingkvProperties properties, Environment environment, ObjectProvider<ClientSecurity> security,
            ObjectProvider<ClientTokens> clientTokens) {
        var startup = properties.startup();
        // The port the server really listens on, known once it started (server.port may be 0).
        return new WarmUp(coordinator, membership, replicaDirectory,
                () -> environment.getRequiredProperty("local.server.port", Integer.class),
                security.getIfAvailable(() -> ClientSecurity.PLAINTEXT),
                // With client authentication on, the warm-up's GETs need a read token like any client's.
                () -> Optional.ofNullable(clientTokens.getIfAvailable()).map(tokens -> tokens.issue("warm-up", Role.READ))
                        .orElse(RequestCredential.NONE),
                new WarmUp.Settings(startup.warmUpRequests(), startup.warmUpTimeout(), properties.replication().timeout()));
    }
}
