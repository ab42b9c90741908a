package io.ringkv.startup;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.Collectors;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.util.FileSystemUtils;

import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.ringkv.peer.wire.Handshake;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.ByteBufFlux;
import reactor.netty.http.client.HttpClient;

/**
 * The training run behind the image's ahead-of-time cache (JDK 25, JEP 483/514/515): started
 * with {@code -XX:AOTCacheOutput=...} and {@code -Dringkv.aot-training=true}, it runs three nodes
 * in this JVM as the chart runs them, TLS on every port and tokens required
 * ({@link TrainingCredentials}), sends them a mixed load of every kind of request the API takes
 * (so that the classes and the method profiles of the real request paths, node-to-node protocol
 * and the token check included, are recorded), shuts them down and exits; the JVM then writes the
 * cache. A node started with
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
        int requests = Integer.getInteger(PROPERTY + ".requests", 25_000);
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
            TrainingCredentials credentials = TrainingCredentials.createIn(data.resolve("credentials"));
            for (int i = 0; i < NODES; i++) {
                List<String> arguments = new ArrayList<>(List.of(
                        "--server.port=" + ports.get(i),
                        "--ringkv.cluster.port=" + clusterPorts.get(i),
                        "--ringkv.data-dir=" + data.resolve("node" + i),
                        "--ringkv.cluster.self=" + url(ports.get(i)),
                        "--ringkv.cluster.peers=" + peers,
                        "--ringkv.cluster.secret=" + secret,
                        "--logging.level.root=warn"));
                arguments.addAll(credentials.nodeArguments());
                nodes.add(new SpringApplicationBuilder(application).run(arguments.toArray(String[]::new)));
            }
            Map<Integer, Long> statuses = train(ports, requests, client(credentials));
            log.warn("AOT training: {} requests on {} nodes in {} s, answers by status {} (-1: no answer)", requests, NODES,
                    Duration.ofNanos(System.nanoTime() - started).toSeconds(), statuses);
            // A cache trained on refusals (a certificate or token the nodes do not take) would record
            // the wrong paths: the image build fails instead.
            long served = statuses.entrySet().stream().filter(e -> e.getKey() >= 200 && e.getKey() < 500)
                    .filter(e -> e.getKey() != 401 && e.getKey() != 403).mapToLong(Map.Entry::getValue).sum();
            if (served < requests * 9L / 10) {
                throw new IllegalStateException("AOT training: only " + served + " of " + requests
                        + " requests were served, answers by status " + statuses);
            }
        } finally {
            nodes.forEach(ConfigurableApplicationContext::close);
            FileSystemUtils.deleteRecursively(data);
        }
    }

    /** A client that trusts the training's CA and sends its admin token (which every route takes). */
    private static HttpClient client(TrainingCredentials credentials) throws IOException {
        SslContext tls = SslContextBuilder.forClient().trustManager(credentials.ca().toFile()).build();
        return HttpClient.create()
                .secure(spec -> spec.sslContext(tls))
                .headers(headers -> headers.set(HttpHeaderNames.AUTHORIZATION, "Bearer " + credentials.token()))
                .responseTimeout(Duration.ofSeconds(10));
    }

    /** Every request of the public API, in the proportions of a mixed load, over every node; the answers' statuses counted. */
    private static Map<Integer, Long> train(List<Integer> ports, int requests, HttpClient http) {
        byte[] value = new byte[VALUE_BYTES];
        ThreadLocalRandom.current().nextBytes(value);
        String[] replicas = {"", "&replicas=2/3", "&replicas=1/3", "&replicas=3/3", "&replicas=1/1"};
        return Flux.range(0, requests)
                .flatMap(i -> {
                    String base = url(ports.get(i % ports.size()));
                    // Ten keys for each hundred requests, so that the hundred's reads find what its
                    // writes wrote: i % 100 decides the kind, and a key of i alone would give reads
                    // and writes disjoint keys (every read a 404, the found value's path untrained).
                    String key = "training-" + Math.floorMod((i / 100) * 7919 + i % 10, KEYS);
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
                .collect(Collectors.groupingBy(status -> status, TreeMap::new, Collectors.counting()))
                .block(Duration.ofMinutes(10));
    }

    private static Mono<Integer> status(HttpClient.ResponseReceiver<?> request) {
        return request.responseSingle((response, body) -> body.then(Mono.just(response.status().code())));
    }

    private static String url(int port) {
        return "https://127.0.0.1:" + port;
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
