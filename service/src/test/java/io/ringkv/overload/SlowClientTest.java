package io.ringkv.overload;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.http.HttpStatus;

import io.ringkv.support.TestNode;

/**
 * Slow clients, as an attacker or a bad network makes them: many PUTs whose bodies stop arriving
 * must not lock ordinary requests out, and a body that does not arrive in time is answered 408.
 */
class SlowClientTest {

    private static final int SLOW_CLIENTS = 300;

    @TempDir
    Path dataDir;

    private TestNode node;
    private final List<Socket> sockets = new ArrayList<>();

    @AfterEach
    void stop() throws IOException {
        for (Socket socket : sockets) {
            socket.close();
        }
        if (node != null) {
            node.stop();
        }
    }

    private Socket slowPut(String key) throws IOException {
        Socket socket = new Socket();
        socket.connect(new InetSocketAddress("127.0.0.1", node.port()), 2_000);
        OutputStream out = socket.getOutputStream();
        out.write(("PUT /v0/entity?id=" + key + " HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1000\r\n\r\nten bytes.")
                .getBytes(StandardCharsets.US_ASCII));
        out.flush();
        sockets.add(socket);
        return socket;
    }

    @Test
    void bodiesThatStopArrivingDoNotLockOrdinaryRequestsOut() throws Exception {
        int port = TestNode.freePorts(1).get(0);
        // Fewer client slots than slow clients: before, each slow body held one until it arrived.
        node = TestNode.create(port, dataDir, List.of(port), Map.of("ringkv.overload.max-client-requests", "64",
                "ringkv.overload.body-timeout", "3s")).start();
        node.client().put().uri("/v0/entity?id=present").bodyValue("here".getBytes()).exchange()
                .expectStatus().isEqualTo(HttpStatus.CREATED);
        for (int i = 0; i < SLOW_CLIENTS; i++) {
            slowPut("slow-" + i);
        }
        Thread.sleep(500);

        for (int i = 0; i < 20; i++) {
            node.client().get().uri("/v0/entity?id=present").exchange().expectStatus().isOk();
            node.client().put().uri("/v0/entity?id=quick-" + i).bodyValue("v".getBytes()).exchange()
                    .expectStatus().isEqualTo(HttpStatus.CREATED);
        }
    }

    @Test
    void aBodyThatDoesNotArriveInTimeIsAnswered408AndStoresNothing() throws Exception {
        int port = TestNode.freePorts(1).get(0);
        node = TestNode.create(port, dataDir, List.of(port), Map.of("ringkv.overload.body-timeout", "1s")).start();
        Socket socket = slowPut("never-complete");
        socket.setSoTimeout(10_000);
        long started = System.nanoTime();
        String answer = readAnswer(socket.getInputStream());
        assertThat(answer).startsWith("HTTP/1.1 408");
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(8));
        node.client().get().uri("/v0/entity?id=never-complete").exchange().expectStatus().isNotFound();
    }

    private static String readAnswer(InputStream in) throws IOException {
        byte[] buffer = new byte[512];
        int read = in.read(buffer);
        return read < 0 ? "" : new String(buffer, 0, read, StandardCharsets.US_ASCII);
    }
}
