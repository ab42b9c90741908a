package io.ringkv.startup;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.util.FileSystemUtils;

import io.netty.buffer.Unpooled;
import io.ringkv.peer.wire.Handshake;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.ByteBufFlux;
import reactor.netty.http.client.HttpClient;

/**
 * The training run behind the image's ahead-of-time cache (JDK 25, JEP 483/514/515): started
 * with {@code -XX:AOTCacheOutput=...} and {@code -Dringkv.aot-training=true}, it runs three nodes
 * in this JVM, sends them a mixed load of every kind of request the API takes (so that the classes
 * and the method profiles of the real request paths, node-to-node protocol included, are
 * recorded), shuts them down and exits; the JVM then writes the cache. A node started with
 * {@code -XX:AOTCache=...} loads and links those classes from the cache and compiles its hot
 * methods from the recorded profiles instead of learning them under live load.
 */
public final class TrainingRun {

    public static final String PROPERTY = "ringkv.aot-training";

    private static final Logger log = LoggerFactory.getLogger(TrainingRun.class);
    private static final int NODES = 3;
    private static final int KEYS = 2_000;
    private static final int VALUE_BYTES = 1_024;

    private TrainingRun() {
    }

    /** Whether this JVM was started to train the cache. */
    public static boolean requested() {
        return Boolean.getBoolean(PROPERTY);
    }

    public static void run(Class<?> application) throws IOException {
        int requests = Integer.getInteger(PROPERTY + ".requests", 30_000);
        Path data = Files.createTempDirectory("ringkv-aot-training");
        // Every port a node listens on is picked here, before any node starts: a port left to the
        // kernel (a cluster port) could be one picked for a node started later.
        List<Integer> picked = freePorts(2 * NODES);
        List<Integer> ports = picked.subList(0, NODES);
        List<Integer> clusterPorts = picked.subList(NODES, 2 * NODES);
        String peers = String.join(",", ports.stream().map(TrainingRun::url).toList());
        String secret = HexFormat.of().formatHex(Handshake.nonce());
        List<ConfigurableApplicationContext> nodes = new ArrayList<>();
        long started = System.nanoTime();
        try {
            for (int i = 0; i < NODES; i++) {
                nodes.add(new SpringApplicationBuilder(application).run(
                        "--server.port=" + ports.get(i),
                        "--ringkv.cluster.port=" + clusterPorts.get(i),
                        "--ringkv.data-dir=" + data.resolve("node" + i),
                        "--ringkv.cluster.self=" + url(ports.get(i)),
                        "--ringkv.cluster.peers=" + peers,
                        "--ringkv.cluster.secret=" + secret,
                        "--logging.level.root=warn"));
            }
            train(ports, requests);
            log.warn("AOT training: {} requests on {} nodes in {} s", requests, NODES,
                    Duration.ofNanos(System.nanoTime() - started).toSeconds());
        } finally {
            nodes.forEach(ConfigurableApplicationContext::close);
            FileSystemUtils.deleteRecursively(data);
        }
    }

    /** Every request of the public API, in the proportions of a mixed load, over every node. */
    private static void train(List<Integer> ports, int requests) {
        HttpClient http = HttpClient.create().responseTimeout(Duration.ofSeconds(10));
        byte[] value = new byte[VALUE_BYTES];
        ThreadLocalRandom.current().nextBytes(value);
        String[] replicas = {"", "&replicas=2/3", "&replicas=1/3", "&replicas=3/3", "&replicas=1/1"};
        Flux.range(0, requests)
                .flatMap(i -> {
                    String base = url(ports.get(i % ports.size()));
                    String key = "training-" + (i * 7919 % KEYS);
                    String entity = base + "/v0/entity?id=" + key + replicas[i % replicas.length];
                    int kind = i % 100;
                    Mono<Integer> call;
                    if (kind < 45) {
                        call = http.put().uri(entity).send(ByteBufFlux.fromInbound(Mono.just(Unpooled.wrappedBuffer(value))))
                                .responseSingle((response, body) -> body.then(Mono.just(response.status().code())));
                    } else if (kind < 90) {
                        call = status(http.get().uri(entity));
                    } else if (kind < 95) {
                        call = status(http.delete().uri(entity));
                    } else if (kind < 97) {
                        call = status(http.get().uri(base + "/v0/entities?start=training-1&end=training-2"));
                    } else if (kind < 98) {
                        call = status(http.get().uri(base + "/v0/cluster"));
                    } else if (kind < 99) {
                        call = status(http.get().uri(base + "/v0/status"));
                    } else {
                        call = status(http.get().uri(base + "/actuator/health"));
                    }
                    return call.onErrorResume(error -> Mono.just(-1));
                }, 16)
                .blockLast(Duration.ofMinutes(10));
    }

    private static Mono<Integer> status(HttpClient.ResponseReceiver<?> request) {
        return request.responseSingle((response, body) -> body.then(Mono.just(response.status().code())));
    }

    private static String url(int port) {
        return "http://127.0.0.1:" + port;
    }

    private static List<Integer> freePorts(int count) throws IOException {
        List<ServerSocket> sockets = new ArrayList<>();
        try {
            for (int i = 0; i < count; i++) {
                sockets.add(new ServerSocket(0));
            }
            return sockets.stream().map(ServerSocket::getLocalPort).toList();
        } finally {
            for (ServerSocket socket : sockets) {
                socket.close();
            }
        }
    }
}
