package io.ringkv.startup;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.Key;
import java.security.KeyStore;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * What the training run's nodes need to run as the chart runs them, TLS on every port and tokens
 * required, made fresh in a folder of the run: a CA, one certificate for 127.0.0.1 it signs (both
 * uses, as the chart's), and a tokens file with one admin token. Made with the JDK's own
 * {@code keytool}, which every Java runtime carries (the image's too), since the JDK has no API
 * that issues certificates; the key leaves keytool's PKCS#12 store through {@link KeyStore}.
 * Nothing of it outlives the run, and nothing trusts its CA but the run's own nodes.
 */
record TrainingCredentials(Path certificate, Path privateKey, Path ca, Path tokens, String token) {

    private static final String ALIAS_CA = "ca";
    private static final String ALIAS_NODE = "node";
    private static final SecureRandom RANDOM = new SecureRandom();

    static TrainingCredentials createIn(Path folder) throws IOException {
        Files.createDirectories(folder);
        Path store = folder.resolve("training.p12");
        String password = HexFormat.of().formatHex(randomBytes(16));
        List<String> common = List.of("-keystore", store.toString(), "-storetype", "PKCS12", "-storepass", password);
        keytool(common, "-genkeypair", "-alias", ALIAS_CA, "-keyalg", "EC", "-groupname", "secp256r1",
                "-dname", "CN=ringkv-training-ca", "-ext", "bc:c", "-validity", "2");
        keytool(common, "-genkeypair", "-alias", ALIAS_NODE, "-keyalg", "EC", "-groupname", "secp256r1",
                "-dname", "CN=127.0.0.1", "-validity", "2");
        Path request = folder.resolve("node.csr");
        keytool(common, "-certreq", "-alias", ALIAS_NODE, "-file", request.toString());
        Path certificate = folder.resolve("node.crt");
        keytool(common, "-gencert", "-alias", ALIAS_CA, "-infile", request.toString(), "-outfile",
                certificate.toString(), "-rfc", "-validity", "2", "-ext", "SAN=ip:127.0.0.1,dns:localhost",
                "-ext", "EKU=serverAuth,clientAuth");
        Path ca = folder.resolve("ca.crt");
        keytool(common, "-exportcert", "-alias", ALIAS_CA, "-rfc", "-file", ca.toString());
        Path privateKey = folder.resolve("node.key");
        Files.writeString(privateKey, pem("PRIVATE KEY", privateKeyOf(store, password)));
        String token = "training-" + HexFormat.of().formatHex(randomBytes(24));
        Path tokens = folder.resolve("tokens");
        Files.writeString(tokens, token + " admin training\n");
        return new TrainingCredentials(certificate, privateKey, ca, tokens, token);
    }

    /** The settings that turn TLS and tokens on with these files. */
    List<String> nodeArguments() {
        return List.of(
                "--ringkv.tls.enabled=true",
                "--ringkv.tls.certificate=" + certificate,
                "--ringkv.tls.private-key=" + privateKey,
                "--ringkv.tls.ca=" + ca,
                "--ringkv.security.enabled=true",
                "--ringkv.security.tokens-file=" + tokens);
    }

    private static byte[] privateKeyOf(Path store, String password) throws IOException {
        try (InputStream in = Files.newInputStream(store)) {
            KeyStore keys = KeyStore.getInstance("PKCS12");
            keys.load(in, password.toCharArray());
            Key key = keys.getKey(ALIAS_NODE, password.toCharArray());
            return key.getEncoded(); // PKCS#8, which the node reads
        } catch (GeneralSecurityException e) {
            throw new IOException("the training's key store cannot be read", e);
        }
    }

    private static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n"
                + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der)
                + "\n-----END " + type + "-----\n";
    }

    private static void keytool(List<String> common, String... arguments) throws IOException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        command.addAll(List.of(arguments));
        command.addAll(common);
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        try {
            if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
                process.destroyForcibly();
                throw new IOException("keytool " + arguments[0] + " failed: " + output.strip());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while keytool ran", e);
        }
    }

    private static byte[] randomBytes(int count) {
        byte[] bytes = new byte[count];
        RANDOM.nextBytes(bytes);
        return bytes;
    }
}
