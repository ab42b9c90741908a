package io.ringkv.tls;

import java.io.IOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.Signature;
import java.security.cert.X509Certificate;
import java.util.List;

import org.springframework.boot.ssl.pem.PemContent;

import io.ringkv.settings.InvalidSettingException;


/**
 * The node's certificate chain, its private key and the CA certificates, as the three PEM files
 * held them when they were read. A set that does not fit together (a file half written, a key
 * that is not the certificate's) is refused whole, naming the file.
 *
 * @param pem the files' text, to see whether they changed and to hand them on unparsed
 */
record TlsMaterial(Pem pem, List<X509Certificate> chain, PrivateKey key, List<X509Certificate> cas) {

    /** The three files' text. */
    record Pem(String certificate, String privateKey, String ca) {
    }

    /** The serial number of this node's certificate, for the log. */
    BigInteger serial() {
        return chain.getFirst().getSerialNumber();
    }

    /** Reads the three files of the settings. */
    static Pem read(TlsProperties settings) {
        return new Pem(read(TlsProperties.CERTIFICATE, settings.certificate()), read(TlsProperties.PRIVATE_KEY, settings.privateKey()),
                read(TlsProperties.CA, settings.ca()));
    }

    private static String read(String setting, Path file) {
        try {
            return Files.readString(file, StandardCharsets.US_ASCII);
        } catch (IOException | RuntimeException e) {
            throw new InvalidSettingException(setting, "cannot read " + file + ": " + e);
        }
    }

    /** The files' content, parsed and checked to fit together. */
    static TlsMaterial parse(Pem pem) {
        List<X509Certificate> chain = certificates(TlsProperties.CERTIFICATE, pem.certificate());
        List<X509Certificate> cas = certificates(TlsProperties.CA, pem.ca());
        PrivateKey key;
        try {
            key = PemContent.of(pem.privateKey()).getPrivateKey();
        } catch (RuntimeException e) {
            throw new InvalidSettingException(TlsProperties.PRIVATE_KEY, "not a PEM private key: " + e.getMessage());
        }
        if (key == null) {
            throw new InvalidSettingException(TlsProperties.PRIVATE_KEY, "holds no PEM private key");
        }
        if (!belongTogether(key, chain.getFirst().getPublicKey())) {
            throw new InvalidSettingException(TlsProperties.PRIVATE_KEY, "is not the key of the certificate in "
                    + TlsProperties.CERTIFICATE + " (serial " + chain.getFirst().getSerialNumber().toString(16) + ")");
        }
        return new TlsMaterial(pem, chain, key, cas);
    }

    private static List<X509Certificate> certificates(String setting, String text) {
        List<X509Certificate> certificates;
        try {
            certificates = PemContent.of(text).getCertificates();
        } catch (RuntimeException e) {
            throw new InvalidSettingException(setting, "not PEM certificates: " + e.getMessage());
        }
        if (certificates == null || certificates.isEmpty()) {
            throw new InvalidSettingException(setting, "holds no PEM certificate");
        }
        return List.copyOf(certificates);
    }

    /**
     * Whether the key signs what the public key verifies: a certificate and a key written one
     * after the other, read between the two writes, do not.
     */
    private static boolean belongTogether(PrivateKey key, PublicKey publicKey) {
        String algorithm = switch (key.getAlgorithm()) {
            case "RSA" -> "SHA256withRSA";
            case "EC" -> "SHA256withECDSA";
            default -> key.getAlgorithm(); // Ed25519, Ed448: the algorithm signs by itself
        };
        byte[] probe = "ringkv".getBytes(StandardCharsets.US_ASCII);
        try {
            Signature signer = Signature.getInstance(algorithm);
            signer.initSign(key);
            signer.update(probe);
            byte[] signature = signer.sign();
            Signature verifier = Signature.getInstance(algorithm);
            verifier.initVerify(publicKey);
            verifier.update(probe);
            return verifier.verify(signature);
        } catch (GeneralSecurityException | RuntimeException e) {
            return false;
        }
    }
}
