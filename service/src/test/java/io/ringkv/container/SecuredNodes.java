package io.ringkv.container;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import javax.net.ssl.SSLContext;

import io.ringkv.support.TestCertificates;

/**
 * TLS on every port and a token required, as the chart installs nodes by default: a CA made at
 * test time, one certificate for every node's hostname (and for loopback, where the test reaches
 * the mapped ports), and a tokens file with one admin token. The files are in a directory of the
 * host that every node mounts read-only at {@value #MOUNT}, so a test can replace them on disk as
 * cert-manager would, and the nodes re-read them every second.
 */
final class SecuredNodes {

    static final String MOUNT = "/etc/ringkv/secured";

    private final Path directory;
    private final List<String> hosts;
    private final TestCertificates.Authority ca = new TestCertificates.Authority("ringkv container-test CA");
    private final String token = "it-admin-" + UUID.randomUUID();
    private TestCertificates.Issued certificate;

    /** Writes the CA, the nodes' certificate and the tokens file into {@code directory} (made readable to the nodes' user). */
    SecuredNodes(Path directory, String... hosts) {
        this.directory = directory;
        this.hosts = new ArrayList<>(List.of(hosts));
        this.hosts.addAll(List.of("127.0.0.1", "localhost"));
        try {
            Files.createDirectories(directory);
            // The nodes run as another user (10001): a temporary directory is the owner's alone.
            Files.setPosixFilePermissions(directory, PosixFilePermissions.fromString("rwxr-xr-x"));
            ca.writeCertificate(directory.resolve("ca.crt"));
            Files.writeString(directory.resolve("tokens"), token + " admin container-tests\n");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        replaceCertificate();
    }

    /** A new certificate for the same hosts, written over the old one (certificate, then key); its serial number. */
    BigInteger replaceCertificate() {
        certificate = ca.issue("ringkv", hosts.toArray(String[]::new));
        certificate.writeTo(directory.resolve("tls.crt"), directory.resolve("tls.key"));
        try {
            for (String file : List.of("ca.crt", "tls.crt", "tls.key", "tokens")) {
                Files.setPosixFilePermissions(directory.resolve(file), PosixFilePermissions.fromString("rw-r--r--"));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return certificate.serial();
    }

    /** The serial number of the certificate the files hold now. */
    BigInteger serial() {
        return certificate.serial();
    }

    /** The settings that turn TLS and tokens on, with the files where the nodes mount them. */
    Map<String, String> environment() {
        return Map.of(
                "RINGKV_TLS_ENABLED", "true",
                "RINGKV_TLS_CERTIFICATE", MOUNT + "/tls.crt",
                "RINGKV_TLS_PRIVATE_KEY", MOUNT + "/tls.key",
                "RINGKV_TLS_CA", MOUNT + "/ca.crt",
                "RINGKV_TLS_CHECK_INTERVAL", "1s",
                "RINGKV_SECURITY_ENABLED", "true",
                "RINGKV_SECURITY_TOKENS_FILE", MOUNT + "/tokens");
    }

    Path directory() {
        return directory;
    }

    /** The CA's certificate, for clients such as k6 (SSL_CERT_FILE). */
    Path caFile() {
        return directory.resolve("ca.crt");
    }

    /** The admin token every call of the test carries. */
    String token() {
        return token;
    }

    /** A TLS context that trusts the CA and presents no certificate: the public and management ports'. */
    SSLContext clientContext() {
        return ca.clientContext(null);
    }

    /**
     * A TLS context that presents a certificate of the CA for a node's hostname: the cluster port
     * asks for one, and lets in only a member's.
     */
    SSLContext memberContext() {
        return ca.clientContext(ca.issue("member", hosts.get(0)));
    }
}
