package io.ringkv.tls;

import org.springframework.boot.autoconfigure.ssl.SslBundleRegistrar;
import org.springframework.boot.ssl.SslBundle;
import org.springframework.boot.ssl.SslBundleKey;
import org.springframework.boot.ssl.SslBundleRegistry;
import org.springframework.boot.ssl.SslOptions;
import org.springframework.boot.ssl.pem.PemSslStoreBundle;
import org.springframework.boot.ssl.pem.PemSslStoreDetails;

import io.netty.handler.codec.http2.Http2SecurityUtil;

/**
 * The node's certificate as Spring Boot's SSL bundle {@value #NAME}, which the public and the
 * management port serve ({@code server.ssl.bundle} and {@code management.server.ssl.bundle}, set
 * by {@link TlsServerSettings}). Updated with each new valid set of files: Spring Boot's Reactor Netty server
 * then serves new connections with it, without a restart. Clients need no certificate there.
 *
 * <p>Only TLS 1.3, and TLS 1.2 with an ECDHE key exchange and an AEAD cipher, are offered
 * ({@link #OPTIONS}): a static RSA key exchange (TLS 1.2's {@code TLS_RSA_WITH_*}) has no forward
 * secrecy, so a key that leaks later would decrypt every recorded session. Netty's list for HTTP/2
 * (Mozilla's "modern" suites) is exactly that set.
 */
final class TlsBundle implements SslBundleRegistrar {

    static final String NAME = "ringkv";
    private static final SslOptions OPTIONS = SslOptions.of(Http2SecurityUtil.CIPHERS.toArray(String[]::new),
            new String[] {"TLSv1.3", "TLSv1.2"});

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
                PemSslStoreDetails.forCertificates(material.pem().certificate()).withPrivateKey(material.pem().privateKey()), null),
                SslBundleKey.NONE, OPTIONS);
    }
}
