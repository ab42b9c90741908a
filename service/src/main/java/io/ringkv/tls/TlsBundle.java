package io.ringkv.tls;

import org.springframework.boot.autoconfigure.ssl.SslBundleRegistrar;
import org.springframework.boot.ssl.SslBundle;
import org.springframework.boot.ssl.SslBundleRegistry;
import org.springframework.boot.ssl.pem.PemSslStoreBundle;
import org.springframework.boot.ssl.pem.PemSslStoreDetails;

/**
 * The node's certificate as Spring Boot's SSL bundle {@value #NAME}, which the public and the
 * management port serve ({@code server.ssl.bundle} and {@code management.server.ssl.bundle}, set
 * by {@link TlsServerSettings}). Updated with each new valid set of files: Spring Boot's Reactor Netty server
 * then serves new connections with it, without a restart. Clients need no certificate there.
 */
final class TlsBundle implements SslBundleRegistrar {

    static final String NAME = "ringkv";

    private final TlsCertificates certificates;

    TlsBundle(TlsCertificates certificates) {
        this.certificates = certificates;
    }

    @Override
    public void registerBundles(SslBundleRegistry registry) {
        registry.registerBundle(NAME, bundle(certificates.current().material()));
        certificates.onChange(material -> registry.updateBundle(NAME, bundle(material)));
    }

    private static SslBundle bundle(TlsMaterial material) {
        return SslBundle.of(new PemSslStoreBundle(
                PemSslStoreDetails.forCertificates(material.pem().certificate()).withPrivateKey(material.pem().privateKey()), null));
    }
}
