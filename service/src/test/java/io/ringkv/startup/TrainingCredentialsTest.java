package io.ringkv.startup;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.X509Certificate;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.ssl.pem.PemContent;

/**
 * The training run's throwaway credentials are what a node takes with TLS and tokens on: a
 * certificate for 127.0.0.1, for both TLS uses, signed by the CA in the CA file; its own key; a
 * tokens file naming the token as admin. (The training run itself fails when its requests are
 * refused, which the image build and bin/aot-cache would show.)
 */
class TrainingCredentialsTest {

    @TempDir
    Path dir;

    @Test
    void aCertificateForTheLoopbackSignedByTheCaWithItsKeyAndAnAdminToken() throws Exception {
        TrainingCredentials credentials = TrainingCredentials.createIn(dir.resolve("credentials"));

        X509Certificate node = PemContent.load(credentials.certificate()).getCertificates().getFirst();
        X509Certificate ca = PemContent.load(credentials.ca()).getCertificates().getFirst();
        node.verify(ca.getPublicKey());
        assertThat(ca.getBasicConstraints()).as("the CA's path length (-1: not a CA)").isNotNegative();
        assertThat(node.getSubjectAlternativeNames()).contains(List.of(7, "127.0.0.1"));
        assertThat(node.getExtendedKeyUsage()).contains("1.3.6.1.5.5.7.3.1", "1.3.6.1.5.5.7.3.2");

        PrivateKey key = PemContent.load(credentials.privateKey()).getPrivateKey();
        Signature signer = Signature.getInstance("SHA256withECDSA");
        signer.initSign(key);
        signer.update(new byte[] {1, 2, 3});
        byte[] signature = signer.sign();
        Signature verifier = Signature.getInstance("SHA256withECDSA");
        verifier.initVerify(node.getPublicKey());
        verifier.update(new byte[] {1, 2, 3});
        assertThat(verifier.verify(signature)).as("the key is the certificate's").isTrue();

        assertThat(Files.readString(credentials.tokens())).isEqualTo(credentials.token() + " admin training\n");
        assertThat(credentials.nodeArguments()).contains("--ringkv.tls.enabled=true", "--ringkv.security.enabled=true",
                "--ringkv.tls.certificate=" + credentials.certificate(), "--ringkv.security.tokens-file=" + credentials.tokens());
    }
}
