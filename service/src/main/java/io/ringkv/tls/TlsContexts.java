package io.ringkv.tls;

import javax.net.ssl.SSLException;

import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.ringkv.settings.InvalidSettingException;

/**
 * Netty's TLS contexts for the cluster port, built from one {@link TlsMaterial}. Peers speak
 * TLS 1.3 only: every node runs this code, so nothing older is ever needed.
 *
 * @param peerServer answers peers, who must present a certificate the CA signed
 * @param peerClient calls peers, presents this node's certificate and checks that the peer's is
 *                   the CA's and for the host of the peer's name
 * @param nodeInfo   asks a node's public port who it is: by address, during discovery, so the
 *                   certificate is checked against the CA but not against the address (what the
 *                   node answers is a claim that a connection to the name then verifies)
 */
record TlsContexts(TlsMaterial material, SslContext peerServer, SslContext peerClient, SslContext nodeInfo) {

    private static final String TLS_1_3 = "TLSv1.3";
    /** Java's name for the hostname check of RFC 2818, which TLS clients do for HTTPS. */
    private static final String CHECK_HOSTNAME = "HTTPS";

    static TlsContexts of(TlsMaterial material) {
        try {
            SslContext server = SslContextBuilder.forServer(material.key(), material.chain())
                    .trustManager(material.cas())
                    .clientAuth(ClientAuth.REQUIRE)
                    .protocols(TLS_1_3)
                    .build();
            SslContext client = client(material).endpointIdentificationAlgorithm(CHECK_HOSTNAME).build();
            SslContext nodeInfo = client(material).endpointIdentificationAlgorithm(null).build();
            return new TlsContexts(material, server, client, nodeInfo);
        } catch (SSLException | IllegalArgumentException e) {
            throw new InvalidSettingException(TlsProperties.CERTIFICATE, "cannot make a TLS context of the files: " + e.getMessage());
        }
    }

    private static SslContextBuilder client(TlsMaterial material) {
        return SslContextBuilder.forClient()
                .keyManager(material.key(), material.chain())
                .trustManager(material.cas())
                .protocols(TLS_1_3);
    }
}
