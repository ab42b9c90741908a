package io.ringkv.support;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import javax.net.ssl.KeyManager;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;

import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509CertificateHolder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.openssl.jcajce.JcaPKCS8Generator;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.springframework.boot.ssl.pem.PemContent;

/**
 * Certificates made at test time, as a small CA would: EC P-256 keys (RSA on request), a CA certificate and leaf
 * certificates it signs for given DNS names and IP addresses. Written as the PEM files a node reads.
 */
public final class TestCertificates {

    private static final AtomicLong SERIALS = new AtomicLong(System.currentTimeMillis());

    /** A certificate and its key, as PEM text. */
    public record Issued(X509Certificate certificate, String certificatePem, String privateKeyPem) {

        public BigInteger serial() {
            return certificate.getSerialNumber();
        }

        /** Writes the certificate, then the key (not at once: a reader may see one new and one old). */
        public void writeTo(Path certificateFile, Path keyFile) {
            try {
                Files.writeString(certificateFile, certificatePem);
                Files.writeString(keyFile, privateKeyPem);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    /** A certificate authority: its own certificate and what it signs. */
    public static final class Authority {
        private final KeyPair keys;
        private final X500Name name;
        private final Issued self;

        public Authority(String commonName) {
            this.keys = keyPair();
            this.name = new X500Name("CN=" + commonName);
            this.self = sign(name, keys, keys, name, List.of(), true);
        }

        /** A leaf certificate for the hosts (DNS names, or IP addresses when they parse as one). */
        public Issued issue(String commonName, String... hosts) {
            return sign(new X500Name("CN=" + commonName), keyPair(), keys, name, List.of(hosts), false);
        }

        /**
         * As {@link #issue}, with an RSA key (cert-manager's default) and its usage for key
         * encipherment too: what lets a server accept TLS 1.2's static RSA key exchange.
         */
        public Issued issueRsa(String commonName, String... hosts) {
            return sign(new X500Name("CN=" + commonName), rsaKeyPair(), keys, name, List.of(hosts), false);
        }

        public void writeCertificate(Path file) {
            try {
                Files.writeString(file, self.certificatePem());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        /**
         * A client's TLS context that trusts this CA alone and presents {@code own} when given (the
         * cluster port asks for a certificate; the public and management ports do not).
         */
        public SSLContext clientContext(Issued own) {
            try {
                KeyStore trust = KeyStore.getInstance("PKCS12");
                trust.load(null, null);
                trust.setCertificateEntry("ca", self.certificate());
                TrustManagerFactory trustManagers = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
                trustManagers.init(trust);
                KeyManager[] keyManagers = null;
                if (own != null) {
                    KeyStore keys = KeyStore.getInstance("PKCS12");
                    keys.load(null, null);
                    keys.setKeyEntry("own", PemContent.of(own.privateKeyPem()).getPrivateKey(), new char[0],
                            new X509Certificate[] {own.certificate()});
                    KeyManagerFactory factory = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
                    factory.init(keys, new char[0]);
                    keyManagers = factory.getKeyManagers();
                }
                SSLContext context = SSLContext.getInstance("TLS");
                context.init(keyManagers, trustManagers.getTrustManagers(), null);
                return context;
            } catch (GeneralSecurityException | IOException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    private TestCertificates() {
    }

    /** The serial number of the certificate a new TLS connection to the port on loopback is served. */
    public static BigInteger servedSerial(SSLContext context, int port) throws IOException {
        try (SSLSocket socket = (SSLSocket) context.getSocketFactory().createSocket("127.0.0.1", port)) {
            socket.setSoTimeout(5_000);
            socket.startHandshake();
            return ((X509Certificate) socket.getSession().getPeerCertificates()[0]).getSerialNumber();
        }
    }

    private static Issued sign(X500Name subject, KeyPair subjectKeys, KeyPair issuerKeys, X500Name issuer, List<String> hosts,
            boolean authority) {
        try {
            Instant now = Instant.now();
            var builder = new JcaX509v3CertificateBuilder(issuer, BigInteger.valueOf(SERIALS.incrementAndGet()),
                    Date.from(now.minus(Duration.ofHours(1))), Date.from(now.plus(Duration.ofDays(1))), subject, subjectKeys.getPublic());
            builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(authority));
            if (authority) {
                builder.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
            } else {
                int usage = subjectKeys.getPublic().getAlgorithm().equals("RSA")
                        ? KeyUsage.digitalSignature | KeyUsage.keyEncipherment : KeyUsage.digitalSignature;
                builder.addExtension(Extension.keyUsage, true, new KeyUsage(usage));
                GeneralName[] names = hosts.stream().map(TestCertificates::generalName).toArray(GeneralName[]::new);
                builder.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(names));
            }
            X509CertificateHolder holder = builder.build(new JcaContentSignerBuilder("SHA256withECDSA").build(issuerKeys.getPrivate()));
            X509Certificate certificate = new JcaX509CertificateConverter().getCertificate(holder);
            // PKCS#8, as cert-manager writes with privateKey.encoding PKCS8: BouncyCastle's own EC form
            // of a JDK key leaves out the curve.
            return new Issued(certificate, pem(certificate), pem(new JcaPKCS8Generator(subjectKeys.getPrivate(), null)));
        } catch (GeneralSecurityException | OperatorCreationException | IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static GeneralName generalName(String host) {
        boolean address = host.contains(":") || host.chars().allMatch(c -> Character.isDigit(c) || c == '.');
        return new GeneralName(address ? GeneralName.iPAddress : GeneralName.dNSName, host);
    }

    private static KeyPair keyPair() {
        try {
            KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
            generator.initialize(new ECGenParameterSpec("secp256r1"));
            return generator.generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    private static KeyPair rsaKeyPair() {
        try {
            KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
            generator.initialize(2048);
            return generator.generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String pem(Object object) throws IOException {
        StringWriter text = new StringWriter();
        try (JcaPEMWriter writer = new JcaPEMWriter(text)) {
            writer.writeObject(object);
        }
        return text.toString();
    }
}
