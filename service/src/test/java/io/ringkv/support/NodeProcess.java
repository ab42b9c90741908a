package io.ringkv.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.IntPredicate;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A node as operators run it: the packaged jar in its own JVM with {@code -Xmx256m} (or less),
 * stopped with SIGTERM. Started by {@code bin/node}, as {@code bin/cluster} and the benchmarks start
 * theirs, so that its JVM flags are theirs too; the launcher execs the JVM, so this process is the
 * JVM itself (signals, resident memory). Its output goes to a log file that failing tests can show.
 * Like {@code bin/cluster}'s nodes and the image's, it starts from the jar's ahead-of-time cache
 * ({@code bin/aot-cache}, trained once per jar before the first node starts) on a JDK 25 or newer:
 * a start then takes about 40 % less CPU, and the process tests start some sixty nodes on two cores.
 */
public final class NodeProcess implements AutoCloseable {

    private final List<String> command;
    private final Path log;
    private final int port;
    /** Variables added to the node's environment, as a pod's env gives them (credentials). */
    private final Map<String, String> environment;
    private Process process;
    /** From a stop (SIGTERM, SIGKILL) until it serves again. */
    private volatile boolean stopping;

    private NodeProcess(List<String> command, Path log, int port, Map<String, String> environment) {
        this.command = command;
        this.log = log;
        this.port = port;
        this.environment = environment;
    }

    /** @param heap the -Xmx value in MiB, such as 256m (bin/node gives direct memory a quarter of it) */
    public static NodeProcess of(String heap, int port, Path log, String... settings) {
        String jar = System.getProperty("ringkv.jar");
        if (jar == null || !Files.exists(Path.of(jar))) {
            throw new IllegalStateException("the packaged jar is missing (" + jar + "): run these tests with mvn verify");
        }
        String launcher = System.getProperty("ringkv.launcher");
        if (launcher == null || !Files.isExecutable(Path.of(launcher))) {
            throw new IllegalStateException("bin/node is missing (" + launcher + "): run these tests with mvn verify");
        }
        List<String> command = new ArrayList<>(List.of(launcher, "--jar", jar));
        if (AHEAD_OF_TIME) {
            trainAheadOfTimeCache(launcher, jar);
            command.add("--aot");
        }
        // C1 only, as the container tests' nodes: three to six nodes share CI's two cores, and a
        // test's nodes live for a minute or two, too short for C2's compiling to pay back. The same
        // tests ran about 40 % faster so (ZoneOutageIT 222 -> 107 s). Full tiered compilation is
        // what the image runs, and the end-to-end test and the benchmarks run the image.
        command.addAll(List.of("--jvm", "-XX:TieredStopAtLevel=1", "--heap", heap, "--server.port=" + port));
        command.addAll(List.of(settings));
        return new NodeProcess(command, log, port, Map.of());
    }

    /** The cache needs a JDK 25 (JEP 483, 515); on the older JDKs the build allows, nodes start from the jar alone. */
    private static final boolean AHEAD_OF_TIME = Runtime.version().feature() >= 25;
    private static boolean aheadOfTimeCacheTrained;

    /**
     * Runs {@code bin/aot-cache} once for this test JVM (a minute the first time for a jar, at once
     * after that), so that nodes started together do not each train it.
     */
    private static synchronized void trainAheadOfTimeCache(String launcher, String jar) {
        if (aheadOfTimeCacheTrained) {
            return;
        }
        try {
            ProcessBuilder builder = new ProcessBuilder(Path.of(launcher).resolveSibling("aot-cache").toString(), jar)
                    .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.INHERIT);
            // A cache only loads into the JVM that wrote it: the nodes' JDK, the tests' own.
            builder.environment().put("JAVA_HOME", System.getProperty("java.home"));
            Process training = builder.start();
            if (!training.waitFor(10, TimeUnit.MINUTES) || training.exitValue() != 0) {
                training.destroyForcibly();
                throw new IllegalStateException("bin/aot-cache " + jar + " failed; its output is above");
            }
            aheadOfTimeCacheTrained = true;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while bin/aot-cache trained", e);
        }
    }

    /**
     * A cluster of {@code count} nodes on free loopback ports, each with its data and log in
     * {@code dir} and the given settings besides its own, started together and answering.
     */
    public static List<NodeProcess> cluster(int count, String heap, Path dir, String... settings) {
        List<NodeProcess> nodes = define(count, heap, dir, settings);
        nodes.parallelStream().forEach(node -> node.startAndAwait(Duration.ofSeconds(120)));
        return nodes;
    }

    /** The nodes of such a cluster, not started: a test that watches them start starts them itself. */
    public static List<NodeProcess> define(int count, String heap, Path dir, String... settings) {
        List<Integer> ports = TestNode.freePorts(count);
        String peers = String.join(",", ports.stream().map(port -> "http://127.0.0.1:" + port).toList());
        List<NodeProcess> nodes = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            List<String> all = new ArrayList<>(List.of("--ringkv.data-dir=" + dir.resolve("data" + i),
                    "--ringkv.cluster.self=http://127.0.0.1:" + ports.get(i),
                    "--ringkv.cluster.peers=" + peers,
                    "--ringkv.cluster.secret=" + TestNode.SECRET));
            all.addAll(List.of(settings));
            nodes.add(of(heap, ports.get(i), dir.resolve("node" + i + ".log"), all.toArray(String[]::new)));
        }
        return nodes;
    }

    /** The same node with more settings, not started. */
    public NodeProcess with(String... settings) {
        List<String> more = new ArrayList<>(command);
        more.addAll(List.of(settings));
        return new NodeProcess(more, log, port, environment);
    }

    /**
     * The same node on another jar, such as an earlier version's (a rolling upgrade's), not started.
     * Without the ahead-of-time cache: it is trained per jar, which takes a minute and a half,
     * more than a test that starts a node or two of that jar saves.
     */
    public NodeProcess onJar(String jar) {
        List<String> other = new ArrayList<>(command);
        other.set(other.indexOf("--jar") + 1, jar);
        other.remove("--aot");
        return new NodeProcess(other, log, port, environment);
    }

    /** The same node with these variables in its environment too, not started. */
    public NodeProcess withEnvironment(Map<String, String> variables) {
        Map<String, String> more = new HashMap<>(environment);
        more.putAll(variables);
        return new NodeProcess(command, log, port, Map.copyOf(more));
    }

    public NodeProcess start() {
        try {
            ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
            // The JDK of the tests (bin/with-jdk takes JAVA_HOME when it is new enough).
            builder.environment().put("JAVA_HOME", System.getProperty("java.home"));
            builder.environment().putAll(environment);
            process = builder.start();
            return this;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Starts the node and waits until {@code /v0/status} answers 200: it is ready. */
    public NodeProcess startAndAwait(Duration timeout) {
        start();
        awaitStatus(timeout, status -> status == 200, 200);
        stopping = false;
        return this;
    }

    /** Whether it is stopping or stopped: from {@link #terminate} or {@link #kill} until {@link #startAndAwait} returns. */
    public boolean isStopping() {
        return stopping;
    }

    /** Waits until the public port answers {@code /v0/status} at all (200 or 503): the web server is up. */
    public NodeProcess awaitListening(Duration timeout) {
        return awaitStatus(timeout, status -> true, 20);
    }

    /** Waits until {@code /v0/status} answers a status the predicate takes, asking every {@code pollMillis}. */
    public NodeProcess awaitStatus(Duration timeout, IntPredicate until, long pollMillis) {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
        Instant deadline = Instant.now().plus(timeout);
        while (Instant.now().isBefore(deadline)) {
            if (!process.isAlive()) {
                throw new IllegalStateException("the node exited with " + process.exitValue() + ":\n" + output());
            }
            try {
                var response = http.send(HttpRequest.newBuilder(URI.create(url() + "/v0/status")).build(),
                        HttpResponse.BodyHandlers.discarding());
                if (until.test(response.statusCode())) {
                    return this;
                }
            } catch (IOException e) {
                // not listening yet
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
            sleep(pollMillis);
        }
        throw new IllegalStateException("the node did not serve within " + timeout + ":\n" + output());
    }

    /** Each member's zone as the node shows it in {@code GET /v0/cluster}; absent where it knows none. */
    public Map<String, String> zonesKnown() {
        try {
            String body = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(url() + "/v0/cluster"))
                    .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString()).body();
            Map<String, String> zones = new TreeMap<>();
            for (JsonNode member : JsonMapper.builder().build().readTree(body).get("members")) {
                if (member.hasNonNull("zone")) {
                    zones.put(member.get("name").asString(), member.get("zone").asString());
                }
            }
            return zones;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Sends SIGTERM and waits for the process to end; returns its exit code. */
    public int terminate(Duration timeout) {
        stopping = true;
        process.destroy();
        try {
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
                throw new IllegalStateException("the node did not stop within " + timeout + " of SIGTERM");
            }
            return process.exitValue();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Waits for a process that should stop by itself; returns its exit code. */
    public int awaitExit(Duration timeout) {
        try {
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
                throw new IllegalStateException("the node still runs after " + timeout + ":\n" + output());
            }
            return process.exitValue();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** SIGKILL: no shutdown at all, as when the machine or the kernel ends the process. */
    public void kill() {
        stopping = true;
        process.destroyForcibly();
        try {
            process.waitFor(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** SIGSTOP: the process hangs, its sockets open, until {@link #resume()}. */
    public void pause() {
        signal("STOP");
    }

    /** SIGCONT. */
    public void resume() {
        signal("CONT");
    }

    private void signal(String name) {
        try {
            int exit = new ProcessBuilder("kill", "-" + name, Long.toString(process.pid())).inheritIO().start().waitFor();
            if (exit != 0) {
                throw new IllegalStateException("kill -" + name + " " + process.pid() + " exited with " + exit);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** The process's resident memory now, in MiB (Linux /proc), as a container's memory limit counts it. */
    public long residentMiB() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/" + process.pid() + "/status"))) {
                if (line.startsWith("VmRSS:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) / 1024;
                }
            }
            return 0;
        } catch (IOException e) {
            return 0; // exited
        }
    }

    public boolean isAlive() {
        return process != null && process.isAlive();
    }

    public int port() {
        return port;
    }

    public String url() {
        return "http://127.0.0.1:" + port;
    }

    public String output() {
        try {
            return Files.exists(log) ? Files.readString(log) : "";
        } catch (IOException e) {
            return "(cannot read " + log + ": " + e.getMessage() + ")";
        }
    }

    @Override
    public void close() {
        if (process != null && process.isAlive()) {
            process.destroyForcibly();
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
