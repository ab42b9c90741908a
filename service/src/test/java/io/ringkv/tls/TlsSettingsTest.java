package io.ringkv.tls;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.ringkv.settings.InvalidSettingException;
import io.ringkv.support.TestCertificates;

/** TLS settings that cannot work stop the node at start, naming the setting; at a reload they leave the old certificate in place. */
class TlsSettingsTest {

    @TempDir
    Path dir;

    private final TestCertificates.Authority ca = new TestCertificates.Authority("test CA");

    private TlsProperties files(TestCertificates.Issued issued) throws Exception {
        issued.writeTo(dir.resolve("tls.crt"), dir.resolve("tls.key"));
        ca.writeCertificate(dir.resolve("ca.crt"));
        return new TlsProperties(true, dir.resolve("tls.crt"), dir.resolve("tls.key"), dir.resolve("ca.crt"), Duration.ofSeconds(1));
    }

    @Test
    void enabledNeedsAllThreeFiles() {
        assertThatThrownBy(() -> new TlsProperties(true, null, dir.resolve("k"), dir.resolve("c"), Duration.ofSeconds(1)))
                .isInstanceOf(InvalidSettingException.class).hasMessageStartingWith("Invalid setting ringkv.tls.certificate: is required");
        assertThatThrownBy(() -> new TlsProperties(true, dir.resolve("c"), null, dir.resolve("c"), Duration.ofSeconds(1)))
                .hasMessageStartingWith("Invalid setting ringkv.tls.private-key: is required");
        assertThatThrownBy(() -> new TlsProperties(true, dir.resolve("c"), dir.resolve("k"), null, Duration.ofSeconds(1)))
                .hasMessageStartingWith("Invalid setting ringkv.tls.ca: is required");
        assertThat(new TlsProperties(false, null, null, null, Duration.ofSeconds(1)).enabled()).as("off needs none").isFalse();
    }

    @Test
    void filesThatAreMissingBrokenOrApartAreNamed() throws Exception {
        TlsProperties settings = files(ca.issue("node", "127.0.0.1"));
        assertThat(new TlsCertificates(settings).current().material().chain()).hasSize(1);

        Files.delete(dir.resolve("ca.crt"));
        assertThatThrownBy(() -> new TlsCertificates(settings)).hasMessageStartingWith("Invalid setting ringkv.tls.ca: cannot read");
        ca.writeCertificate(dir.resolve("ca.crt"));

        Files.writeString(dir.resolve("tls.crt"), "not a certificate");
        assertThatThrownBy(() -> new TlsCertificates(settings)).hasMessageStartingWith("Invalid setting ringkv.tls.certificate:");

        // A certificate with another certificate's key: what a reader sees between writing the two files.
        Files.writeString(dir.resolve("tls.crt"), ca.issue("other", "127.0.0.1").certificatePem());
        assertThatThrownBy(() -> new TlsCertificates(settings))
                .hasMessageStartingWith("Invalid setting ringkv.tls.private-key: is not the key of the certificate");
    }

    @Test
    void aBrokenReplacementKeepsTheCertificateInUseAndAGoodOneReplacesIt() throws Exception {
        TestCertificates.Issued first = ca.issue("node", "127.0.0.1");
        TlsCertificates certificates = new TlsCertificates(files(first));
        List<Object> told = new java.util.ArrayList<>();
        certificates.onChange(told::add);

        Files.writeString(dir.resolve("tls.key"), "-----BEGIN PRIVATE KEY-----\nbroken\n-----END PRIVATE KEY-----\n");
        certificates.check();
        assertThat(certificates.current().material().serial()).isEqualTo(first.serial());
        assertThat(told).isEmpty();

        TestCertificates.Issued second = ca.issue("node", "127.0.0.1");
        second.writeTo(dir.resolve("tls.crt"), dir.resolve("tls.key"));
        certificates.check();
        assertThat(certificates.current().material().serial()).isEqualTo(second.serial());
        assertThat(told).hasSize(1);

        certificates.check();
        assertThat(told).as("unchanged files are no change").hasSize(1);
    }

    @Test
    void memberUrlsSayWhetherTheyAreReachedOverTls() {
        List<String> https = List.of("https://10.0.0.1:8080", "https://10.0.0.2:8080");
        ClusterUrls.requireScheme(true, "https://10.0.0.1:8080", https);
        ClusterUrls.requireScheme(false, "http://10.0.0.1:8080", List.of("http://10.0.0.1:8080"));

        assertThatThrownBy(() -> ClusterUrls.requireScheme(true, "http://127.0.0.1:8080", List.of()))
                .isInstanceOf(InvalidSettingException.class)
                .hasMessageStartingWith("Invalid setting ringkv.cluster.self: must be an https:// URL since ringkv.tls.enabled is true");
        assertThatThrownBy(() -> ClusterUrls.requireScheme(true, "https://10.0.0.1:8080", List.of("https://10.0.0.1:8080", "http://10.0.0.2:8080")))
                .hasMessageStartingWith("Invalid setting ringkv.cluster.peers: must be https:// URLs");
        assertThatThrownBy(() -> ClusterUrls.requireScheme(false, "https://10.0.0.1:8080", List.of()))
                .hasMessageStartingWith("Invalid setting ringkv.cluster.self: must be an http:// URL since ringkv.tls.enabled is false");
    }
}
