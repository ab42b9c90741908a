package io.ringkv.tls;

import static io.ringkv.support.TestCertificates.servedSerial;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.math.BigInteger;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSocket;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.micrometer.core.instrument.MeterRegistry;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import io.micrometer.core.instrument.Timer;
import io.ringkv.peer.server.PeerServer;
import io.ringkv.support.BlockHoundInstaller;
import io.ringkv.support.PeerTestClient;
import io.ringkv.support.PortSiege;
import io.ringkv.support.TestCertificates;
import io.ringkv.support.TestNode;
import reactor.netty.Connection;
import reactor.netty.tcp.TcpClient;

/**
 * Two nodes with TLS on every port and client tokens required, as the chart runs them: clients
 * reach them over HTTPS only and with a token, writes replicate over
 * mutual TLS, a peer whose certificate is for another name or from another CA gets nothing on the
 * cluster port, and certificates replaced on disk under load are served without a failed request.
 * The public and management ports take only forward-secret AEAD suites and close idle connections.
 */
class TlsClusterTest {

    @TempDir
    Path dir;

    /** A write token of the nodes' tokens file, which every request of the test carries (see {@link #send}). */
    private static final String TOKEN = "tls-test-write-token-0123456789";
    private static final Duration IDLE_TIMEOUT = Duration.ofSeconds(2);

    private final TestCertificates.Authority ca = new TestCertificates.Authority("ringkv test CA");

    @Test
    void everyPortSpeaksTlsAndCertificatesRotateUnderLoad() throws Exception {
        int mark = BlockHoundInstaller.violations().size();
        Path tls = dir.resolve("tls");
        java.nio.file.Files.createDirectories(tls);
        ca.writeCertificate(tls.resolve("ca.crt"));
        // RSA first (cert-manager's default, and what TLS 1.2's static RSA key exchange needs), EC after the rotation.
        TestCertificates.Issued first = ca.issueRsa("ringkv", "127.0.0.1", "localhost");
        first.writeTo(tls.resolve("tls.crt"), tls.resolve("tls.key"));
        Path tokens = dir.resolve("tokens");
        java.nio.file.Files.writeString(tokens, TOKEN + " write tls-test\n");

        List<Integer> ports = TestNode.freePorts(3);
        int managementPort = ports.get(2);
        List<Integer> nodePorts = ports.subList(0, 2);
        String peers = String.join(",", nodePorts.stream().map(port -> "https://127.0.0.1:" + port).toList());
        List<TestNode> nodes = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            Map<String, Object> settings = new LinkedHashMap<>();
            settings.put("ringkv.cluster.self", "https://127.0.0.1:" + nodePorts.get(i));
            settings.put("ringkv.cluster.peers", peers);
            settings.put("ringkv.tls.enabled", "true");
            settings.put("ringkv.tls.certificate", tls.resolve("tls.crt"));
            settings.put("ringkv.tls.private-key", tls.resolve("tls.key"));
            settings.put("ringkv.tls.ca", tls.resolve("ca.crt"));
            settings.put("ringkv.tls.check-interval", "200ms");
            settings.put("ringkv.security.enabled", "true");
            settings.put("ringkv.security.tokens-file", tokens);
            settings.put("server.netty.idle-timeout", IDLE_TIMEOUT.toString());
            if (i == 0) {
                settings.put("management.server.port", managementPort);
            }
            nodes.add(TestNode.create(nodePorts.get(i), dir.resolve("node" + i), nodePorts, settings));
        }
        try {
            nodes.parallelStream().forEach(TestNode::start);
            double warmUpReads = nodes.get(0).bean(MeterRegistry.class).find("ringkv.client.requests").timers().stream()
                    .mapToLong(Timer::count).sum();
            assertThat(warmUpReads).as("the warm-up's reads reached the node's own public port over TLS").isGreaterThanOrEqualTo(20);
            SSLContext trustingTheCa = ca.clientContext(null);
            HttpClient https = HttpClient.newBuilder().sslContext(trustingTheCa).connectTimeout(Duration.ofSeconds(5)).build();
            String node0 = nodes.get(0).url().replace("http://", "https://");
            String node1 = nodes.get(1).url().replace("http://", "https://");

            // Two nodes: a write needs both (2/2), so it crossed the cluster port's mutual TLS.
            assertThat(send(https, put(node0 + "/v0/entity?id=a", "A")).statusCode()).isEqualTo(201);
            HttpResponse<String> read = send(https, HttpRequest.newBuilder(URI.create(node1 + "/v0/entity?id=a&replicas=2/2")).build());
            assertThat(read.statusCode()).isEqualTo(200);
            assertThat(read.body()).isEqualTo("A");
            assertThat(send(https, HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + managementPort + "/actuator/health")).build())
                    .statusCode()).as("the management port speaks TLS too").isEqualTo(200);

            HttpResponse<String> anonymous = https.send(HttpRequest.newBuilder(URI.create(node0 + "/v0/entity?id=a")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(anonymous.statusCode()).as("a request without a token, over TLS").isEqualTo(401);

            HttpClient plaintext = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
            assertThatThrownBy(() -> send(plaintext, HttpRequest.newBuilder(URI.create(nodes.get(0).url() + "/v0/status")).build()))
                    .as("plaintext HTTP to the TLS public port").isInstanceOf(IOException.class);

            for (int port : List.of(nodePorts.get(0), managementPort)) {
                onlyForwardSecretAeadSuitesAreAccepted(port, tls.resolve("ca.crt"));
            }
            idleConnectionsAreClosed(List.of(nodePorts.get(0), managementPort), trustingTheCa);

            peersAreAdmittedByTheirCertificate(nodes.get(0).url().replace("http://", "https://"), tls,
                    nodes.get(0).bean(MeterRegistry.class));
            aSiegeWithoutACertificateKeepsNoMemberOut(node0, tls, nodes.get(0).bean(PeerServer.class).port());

            rotationUnderLoad(https, List.of(node0, node1), tls, List.of(nodePorts.get(0), nodePorts.get(1), managementPort),
                    nodes.get(1).bean(PeerServer.class).port(), first.serial());
        } finally {
            nodes.forEach(TestNode::stop);
        }
        assertThat(BlockHoundInstaller.violationsSince(mark)).isEmpty();
    }

    /**
     * TLS 1.3, or TLS 1.2 with ECDHE and an AEAD cipher; never TLS 1.2's static RSA key exchange,
     * which has no forward secrecy. The client is BoringSSL, as the JDK no longer offers TLS_RSA_*.
     */
    private static void onlyForwardSecretAeadSuitesAreAccepted(int port, Path caFile) {
        assertThat(handshakes(port, caFile, "TLSv1.2", "TLS_RSA_WITH_AES_128_GCM_SHA256"))
                .as("port %d, TLS 1.2 with static RSA key exchange", port).isFalse();
        assertThat(handshakes(port, caFile, "TLSv1.2", "TLS_RSA_WITH_AES_256_GCM_SHA384"))
                .as("port %d, TLS 1.2 with static RSA key exchange", port).isFalse();
        assertThat(handshakes(port, caFile, "TLSv1.2", "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA"))
                .as("port %d, TLS 1.2 ECDHE without AEAD", port).isFalse();
        assertThat(handshakes(port, caFile, "TLSv1.2", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"))
                .as("port %d, TLS 1.2 ECDHE with AES-GCM", port).isTrue();
        assertThat(handshakes(port, caFile, "TLSv1.3")).as("port %d, TLS 1.3", port).isTrue();
    }

    private static boolean handshakes(int port, Path caFile, String protocol, String... suites) {
        try {
            SslContextBuilder builder = SslContextBuilder.forClient().sslProvider(SslProvider.OPENSSL)
                    .trustManager(caFile.toFile()).protocols(protocol);
            if (suites.length > 0) {
                builder.ciphers(List.of(suites));
            }
            SslContext context = builder.build();
            Connection connection = TcpClient.create().host("127.0.0.1").port(port)
                    .secure(spec -> spec.sslContext(context)).connect().block(Duration.ofSeconds(10));
            connection.disposeNow();
            return true;
        } catch (SSLException | RuntimeException e) {
            return false;
        }
    }

    /**
     * A connection that completes the handshake and never sends a request is closed by the server
     * once idle for {@link #IDLE_TIMEOUT}; one that never completes the handshake, at Reactor
     * Netty's handshake timeout (10 s). Those are opened first, and all at once, to wait for them
     * together.
     */
    private static void idleConnectionsAreClosed(List<Integer> ports, SSLContext trustingTheCa) throws IOException {
        List<Socket> withoutHandshake = new ArrayList<>();
        try {
            for (int port : ports) {
                withoutHandshake.add(new Socket("127.0.0.1", port));
            }
            for (int port : ports) {
                try (SSLSocket tls = (SSLSocket) trustingTheCa.getSocketFactory().createSocket("127.0.0.1", port)) {
                    tls.startHandshake();
                    assertClosedByTheServer(tls, IDLE_TIMEOUT.multipliedBy(4), "port " + port + ", handshake and no request");
                }
            }
            for (Socket socket : withoutHandshake) {
                assertClosedByTheServer(socket, Duration.ofSeconds(15), "port " + socket.getPort() + ", no handshake");
            }
        } finally {
            for (Socket socket : withoutHandshake) {
                socket.close();
            }
        }
    }

    private static void assertClosedByTheServer(Socket socket, Duration within, String what) throws IOException {
        socket.setSoTimeout((int) within.toMillis());
        try {
            assertThat(socket.getInputStream().read()).as(what).isEqualTo(-1);
        } catch (java.net.SocketTimeoutException e) {
            throw new AssertionError(what + ": still open after " + socket.getSoTimeout() + " ms", e);
        } catch (java.net.SocketException | SSLException e) {
            // A reset or a TLS close without close_notify: closed as well.
        }
    }

    /** The cluster secret alone is not enough: the certificate must be the CA's and for a member's host. */
    private void peersAreAdmittedByTheirCertificate(String node, Path tls, MeterRegistry nodeMeters) throws Exception {
        byte[] key = "a".getBytes();
        try (PeerTestClient member = peer(ca.issue("member", "127.0.0.1"), tls, "https://127.0.0.1:1")) {
            assertThat(member.of(node).read(key).block(Duration.ofSeconds(10))).as("a member's certificate").isPresent();
        }
        double refused = refusedPeerConnections(nodeMeters);
        try (PeerTestClient impostor = peer(ca.issue("member", "127.0.0.1"), tls, "https://ringkv-9.example:1")) {
            assertThatThrownBy(() -> impostor.of(node).read(key).block(Duration.ofSeconds(10)))
                    .as("a member's certificate, claiming a name it is not for").isNotNull();
        }
        refused = assertCountedRefusal(nodeMeters, refused, "a claimed name the certificate is not for");
        try (PeerTestClient otherName = peer(ca.issue("intruder", "intruder.example", "10.9.9.9"), tls, "https://10.9.9.9:1")) {
            assertThatThrownBy(() -> otherName.of(node).read(key).block(Duration.ofSeconds(10)))
                    .as("the CA's certificate for a host that is no member's").isNotNull();
        }
        refused = assertCountedRefusal(nodeMeters, refused, "a certificate for no member's host");
        TestCertificates.Authority otherCa = new TestCertificates.Authority("another CA");
        try (PeerTestClient untrusted = peer(otherCa.issue("member", "127.0.0.1"), tls, "https://127.0.0.1:1")) {
            assertThatThrownBy(() -> untrusted.of(node).read(key).block(Duration.ofSeconds(10)))
                    .as("a certificate for a member's host from another CA").isNotNull();
        }
        assertCountedRefusal(nodeMeters, refused, "a certificate from another CA");
    }

    /**
     * Connections without a certificate that never finish TLS, idle or stalled halfway through a
     * ClientHello, more than the node takes in the handshake and reopened as it closes them: a
     * member still gets in.
     */
    private void aSiegeWithoutACertificateKeepsNoMemberOut(String node, Path tls, int clusterPort) throws Exception {
        // A TLS record of 512 bytes announced, its first byte (a ClientHello's type), and nothing more.
        byte[] halfAClientHello = {0x16, 0x03, 0x01, 0x02, 0x00, 0x01};
        try (var siege = new PortSiege(clusterPort, 80, new byte[0], halfAClientHello);
                PeerTestClient member = peer(ca.issue("member", "127.0.0.1"), tls, "https://127.0.0.1:1")) {
            assertThat(member.of(node).read("a".getBytes()).block(Duration.ofSeconds(10))).as("a member under siege").isPresent();
        }
    }

    /** Every refusal on the cluster port, TLS's as the handshake's, is in ringkv.peer.connections.refused. */
    private static double assertCountedRefusal(MeterRegistry meters, double before, String what) {
        await().atMost(Duration.ofSeconds(5)).untilAsserted(() ->
                assertThat(refusedPeerConnections(meters)).as("refusals counted after " + what).isGreaterThan(before));
        return refusedPeerConnections(meters);
    }

    private static double refusedPeerConnections(MeterRegistry meters) {
        return meters.get("ringkv.peer.connections.refused").counter().count();
    }

    /** A peer with the cluster secret and this certificate (trusting the nodes' CA), under this name. */
    private PeerTestClient peer(TestCertificates.Issued certificate, Path tls, String name) {
        Path own = dir.resolve("peer-" + certificate.serial());
        try {
            java.nio.file.Files.createDirectories(own);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        certificate.writeTo(own.resolve("tls.crt"), own.resolve("tls.key"));
        var settings = new TlsProperties(true, own.resolve("tls.crt"), own.resolve("tls.key"), tls.resolve("ca.crt"), Duration.ofSeconds(1));
        return new PeerTestClient(TestNode.SECRET, new PeerClientTls(new TlsCertificates(settings)), name);
    }

    private void rotationUnderLoad(HttpClient https, List<String> nodes, Path tls, List<Integer> httpsPorts, int clusterPort,
            BigInteger oldSerial) throws Exception {
        AtomicBoolean running = new AtomicBoolean(true);
        AtomicInteger requests = new AtomicInteger();
        List<String> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
        Thread load = Thread.ofPlatform().name("tls-load").start(() -> {
            for (int i = 0; running.get(); i++) {
                String node = nodes.get(i % nodes.size());
                try {
                    int put = send(https, put(node + "/v0/entity?id=k" + i, "v" + i)).statusCode();
                    int get = send(https, HttpRequest.newBuilder(URI.create(node + "/v0/entity?id=k" + i)).build()).statusCode();
                    if (put != 201 || get != 200) {
                        failures.add("k" + i + ": PUT " + put + ", GET " + get);
                    }
                } catch (IOException | RuntimeException e) {
                    failures.add("k" + i + ": " + e);
                } catch (InterruptedException e) {
                    return;
                }
                requests.addAndGet(2);
            }
        });
        try {
            await().atMost(Duration.ofSeconds(10)).until(() -> requests.get() >= 20);
            TestCertificates.Issued second = ca.issue("ringkv", "127.0.0.1", "localhost");
            // Certificate first, key second: a node that reads between the two keeps the old pair.
            second.writeTo(tls.resolve("tls.crt"), tls.resolve("tls.key"));
            assertThat(second.serial()).isNotEqualTo(oldSerial);

            SSLContext asAMember = ca.clientContext(ca.issue("member", "127.0.0.1"));
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
                for (int port : httpsPorts) {
                    assertThat(servedSerial(ca.clientContext(null), port)).as("port %d", port).isEqualTo(second.serial());
                }
                assertThat(servedSerial(asAMember, clusterPort)).as("the cluster port").isEqualTo(second.serial());
            });
            int before = requests.get();
            await().atMost(Duration.ofSeconds(10)).until(() -> requests.get() >= before + 20);
        } finally {
            running.set(false);
            load.join(Duration.ofSeconds(20));
        }
        assertThat(failures).as("requests failed during the rotation (of %d)", requests.get()).isEmpty();
    }

    private static HttpRequest put(String url, String body) {
        return HttpRequest.newBuilder(URI.create(url)).PUT(HttpRequest.BodyPublishers.ofString(body)).build();
    }

    private static HttpResponse<String> send(HttpClient client, HttpRequest request) throws IOException, InterruptedException {
        return client.send(HttpRequest.newBuilder(request, (name, value) -> true).timeout(Duration.ofSeconds(10))
                .header("Authorization", "Bearer " + TOKEN).build(), HttpResponse.BodyHandlers.ofString());
    }
}
