package io.ringkv.tls;

import java.nio.file.Path;
import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

import io.ringkv.settings.InvalidSettingException;
import jakarta.validation.constraints.Positive;

/**
 * TLS on every port the node listens on: the public port, the management port and the cluster
 * (peer) port, where it is mutual. The files are PEM, as cert-manager and most CAs write them,
 * and are read again when they change ({@link TlsCertificates}).
 *
 * @param enabled       whether the ports speak TLS; on, {@code ringkv.cluster.self} and
 *                      {@code ringkv.cluster.peers} are {@code https://} URLs
 * @param certificate   this node's certificate (PEM), followed by any intermediate certificates;
 *                      its subject alternative names must include the host of this node's URL
 * @param privateKey    the certificate's private key (PEM: PKCS#8, PKCS#1 RSA or SEC1 EC)
 * @param ca            the certificates (PEM) that sign the members' certificates: peers are
 *                      trusted by them, and must present one of theirs on the cluster port
 * @param checkInterval how often the three files are read to see whether they changed
 */
@Validated
@ConfigurationProperties("ringkv.tls")
public record TlsProperties(@DefaultValue("false") boolean enabled, Path certificate, Path privateKey, Path ca,
        @DefaultValue("10s") @Positive Duration checkInterval) {

    static final String CERTIFICATE = "ringkv.tls.certificate";
    static final String PRIVATE_KEY = "ringkv.tls.private-key";
    static final String CA = "ringkv.tls.ca";

    public TlsProperties {
        if (enabled) {
            requireSet(CERTIFICATE, certificate);
            requireSet(PRIVATE_KEY, privateKey);
            requireSet(CA, ca);
        }
    }

    private static void requireSet(String setting, Path file) {
        if (file == null) {
            throw new InvalidSettingException(setting, "is required when ringkv.tls.enabled is true (a PEM file)");
        }
    }
}
