package io.ringkv.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.ringkv.storage.HintStore;
import io.ringkv.storage.RocksStore;
import io.ringkv.support.TestNode;
import io.ringkv.support.TestStores;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/**
 * A node that stops while its write to a slower replica is still running: the write ends (made,
 * or kept as a hint for that replica) before the node closes its peer connections and its store.
 */
class ShutdownTest {

    @TempDir
    Path dataDir;
    @TempDir
    Path peerDataDir;

    private final List<Socket> accepted = new CopyOnWriteArrayList<>();
    private ServerSocket hungClusterPort;
    private DisposableServer hungPublicPort;
    private TestNode node;
    private TestNode peerNode;

    @AfterEach
    void close() throws IOException {
        if (node != null) {
            node.stop();
        }
        if (peerNode != null) {
            peerNode.stop();
        }
        if (hungPublicPort != null) {
            hungPublicPort.disposeNow();
        }
        if (hungClusterPort != null) {
            hungClusterPort.close();
        }
        for (Socket socket : accepted) {
            socket.close();
        }
    }

    @Test
    void aWriteStillGoingToASlowerReplicaFinishesBeforeTheNodeStops() throws Exception {
        List<Integer> ports = TestNode.freePorts(2);
        // The peer answers every replica call 1.5 s late, within the 4 s timeout.
        peerNode = TestNode.create(ports.get(1), peerDataDir, ports, Map.of("ringkv.testing.replica-delay", "1500ms")).start();
        node = TestNode.create(ports.get(0), dataDir, ports, Map.of("ringkv.replication.timeout", "4s", "ringkv.startup.warm-up-requests", "0")).start();
        TestNode.awaitEachSeesEveryOtherHoldData(List.of(node, peerNode));

        node.client().put().uri("/v0/entity?id=slow-copy&replicas=1/2").bodyValue("v".getBytes()).exchange()
                .expectStatus().isCreated();
        node.stop();
        node = null;

        assertThat(peerNode.stored("slow-copy")).isPresent();
        try (RocksStore store = TestStores.open(dataDir)) {
            // Cut off by the shutdown, the call would have failed and left a needless hint.
            assertThat(new HintStore(store).page(new byte[0], null, 100)).as("hints left by the shutdown").isEmpty();
        }
    }

    @Test
    void aWriteThatCannotFinishIsHintedBeforeTheStoreCloses() throws Exception {
        List<Integer> ports = TestNode.freePorts(2);
        int self = ports.get(0);
        int peer = ports.get(1);
        startHungPeer(peer);
        node = TestNode.create(self, dataDir, ports, Map.of("ringkv.replication.timeout", "1s", "ringkv.startup.warm-up-requests", "0")).start();

        // 1/2: answered once this node has it; the call to the hung peer is still running.
        node.client().put().uri("/v0/entity?id=in-flight&replicas=1/2").bodyValue("v".getBytes()).exchange()
                .expectStatus().isCreated();
        node.stop();
        node = null;

        try (RocksStore store = TestStores.open(dataDir)) {
            List<byte[][]> hints = new HintStore(store).page(new byte[0], null, 100);
            byte[] key = "in-flight".getBytes(StandardCharsets.UTF_8);
            // A hint's value is the key's length (2 bytes), the key, then the record.
            assertThat(hints).as("a hint for the peer that never answered")
                    .anySatisfy(hint -> assertThat(Arrays.copyOfRange(hint[1], 2, 2 + key.length)).isEqualTo(key));
        }
    }

    /** A peer that tells its cluster port on its public one, then accepts connections there and never answers. */
    private void startHungPeer(int publicPort) throws IOException {
        hungClusterPort = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread.ofVirtual().start(() -> {
            try {
                while (true) {
                    accepted.add(hungClusterPort.accept());
                }
            } catch (IOException closed) {
                // the test is over
            }
        });
        String self = "http://127.0.0.1:" + publicPort;
        String info = "{\"self\":\"" + self + "\",\"clusterPort\":" + hungClusterPort.getLocalPort() + "}";
        hungPublicPort = HttpServer.create().host("127.0.0.1").port(publicPort)
                .route(routes -> routes.get("/v0/cluster", (request, response) -> response.sendString(reactor.core.publisher.Mono.just(info))))
                .bindNow();
    }
}
