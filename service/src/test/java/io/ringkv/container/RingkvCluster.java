package io.ringkv.container;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Supplier;

import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestWatcher;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.Network;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.containers.wait.strategy.WaitStrategy;
import org.testcontainers.lifecycle.Startables;
import org.testcontainers.utility.DockerImageName;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.exception.InternalServerErrorException;
import com.github.dockerjava.api.exception.NotFoundException;
import com.github.dockerjava.api.model.AccessMode;
import com.github.dockerjava.api.model.Bind;
import com.github.dockerjava.api.model.ContainerNetwork;
import com.github.dockerjava.api.model.HostConfig;
import com.github.dockerjava.api.model.Volume;

import io.ringkv.container.NodeClient.ClusterView;

/**
 * Nodes of the ringkv image in Docker containers on a network of their own, the way Kubernetes
 * runs them: every node answers to a name of its own (its hostname and a network alias, like a
 * StatefulSet pod) and to the shared alias {@value #SERVICE_NAME} (like a headless Service, which
 * Docker's embedded DNS resolves to every running member). Each node keeps its data in a named
 * volume of its own, so a node re-created under the same name finds its data, like a pod and its
 * persistent volume claim.
 *
 * <p>The network has a fixed subnet and every container gets an address no earlier container had:
 * Docker would otherwise give a re-created container the address its predecessor freed.
 *
 * <p>Everything created here carries the label {@value #RUN_LABEL} and is removed by
 * {@link #close()} (also called by a shutdown hook if the JVM ends first).
 */
public final class RingkvCluster implements AutoCloseable {

    public static final String SERVICE_NAME = "ringkv";
    public static final int API_PORT = 8080;
    public static final int CLUSTER_PORT = 7070;
    public static final int MANAGEMENT_PORT = 9090;
    public static final String DATA_DIR = "/var/lib/ringkv";
    static final String RUN_LABEL = "org.ringkv.it.run";

    private static final Duration STARTUP_TIMEOUT = Duration.ofMinutes(3);
    private static final int STOP_TIMEOUT_SECONDS = 30;
    private static final int LOG_TAIL_LINES = 150;

    private final String image;
    private final String secret;
    private final Map<String, String> environment;
    private final String run = HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt());
    private final DockerClient docker = DockerClientFactory.instance().client();
    private final SecuredNodes secured;
    private final String scheme;
    private final NodeClient client;
    private final Network network;
    private final byte[] subnet;
    private int nextAddress = 10;
    private final Map<String, Node> nodes = new LinkedHashMap<>();
    private final List<String> volumes = new ArrayList<>();
    private final Map<String, String> goneLogs = new LinkedHashMap<>();
    private final Thread shutdownHook = new Thread(this::removeEverything, "ringkv-cluster-cleanup");
    private boolean closed;

    /**
     * @param image       the ringkv image
     * @param secret      the cluster secret, given to every node
     * @param environment settings every node gets, besides its own {@code RINGKV_CLUSTER_SELF}
     */
    public RingkvCluster(String image, String secret, Map<String, String> environment) {
        this(image, secret, environment, null);
    }

    /**
     * Nodes with TLS on every port and a token required ({@code https://} names), when
     * {@code secured} is given: they mount its files, and the cluster's own calls carry its token.
     */
    RingkvCluster(String image, String secret, Map<String, String> environment, SecuredNodes secured) {
        this.image = image;
        this.secret = secret;
        this.secured = secured;
        this.scheme = secured == null ? "http" : "https";
        this.client = new NodeClient(secured);
        Map<String, String> settings = new LinkedHashMap<>(environment);
        if (secured != null) {
            settings.putAll(secured.environment());
        }
        this.environment = Map.copyOf(settings);
        Network created = null;
        String[] pool = null;
        for (int attempt = 1; created == null; attempt++) {
            pool = freeSubnet();
            String[] subnetAndGateway = pool;
            Network candidate = Network.builder().createNetworkCmdModifier(cmd -> cmd
                    .withName("ringkv-it-" + run)
                    .withLabels(Map.of(RUN_LABEL, run))
                    .withIpam(new com.github.dockerjava.api.model.Network.Ipam()
                            .withConfig(new com.github.dockerjava.api.model.Network.Ipam.Config()
                                    .withSubnet(subnetAndGateway[0]).withGateway(subnetAndGateway[1]))))
                    .build();
            try {
                candidate.getId();
                created = candidate;
            } catch (RuntimeException e) {
                // Another network may have taken the subnet since the probe: try again.
                if (attempt == 3) {
                    throw e;
                }
            }
        }
        this.network = created;
        this.subnet = address(pool[0].substring(0, pool[0].indexOf('/')));
        Runtime.getRuntime().addShutdownHook(shutdownHook);
        System.out.printf("[container tests] network ringkv-it-%s, subnet %s%n", run, pool[0]);
    }

    /** The settings of DNS discovery as the Helm chart would give them, with short periods for tests. */
    public static Map<String, String> dnsDiscovery(String secret) {
        return Map.of(
                "RINGKV_CLUSTER_DISCOVERY_DNS_NAME", SERVICE_NAME,
                "RINGKV_CLUSTER_DISCOVERY_REFRESH_INTERVAL", "1s",
                "RINGKV_CLUSTER_DISCOVERY_REMOVAL_AFTER", "5",
                "RINGKV_CLUSTER_SECRET", secret,
                // Small heap and C1 only: several JVMs start at once on 2 cores. No collector here:
                // the image's entrypoint chooses G1 (its ahead-of-time cache was trained with it), and
                // a second collector flag makes the JVM refuse to start.
                "JAVA_TOOL_OPTIONS", "-Xmx256m -XX:TieredStopAtLevel=1");
    }

    public String secret() {
        return secret;
    }

    /** The nodes' network, for other containers that reach them by name (a load generator). */
    public Network network() {
        return network;
    }

    /**
     * Waits until every running node has found its members, lists exactly the nodes of these
     * hostnames on its ring, each holding its data (NORMAL) and reachable (UP). Agreeing on the
     * members is not enough: in a new cluster a node that saw a peer turn NORMAL first joins it
     * (pulls, and is JOINING) for a few seconds, and until every node has seen it NORMAL a write
     * at {@code replicas=3/3} is refused with 400.
     */
    public void awaitRing(Duration atMost, String... hosts) {
        List<String> ring = Arrays.stream(hosts).map(this::name).sorted().toList();
        await().atMost(atMost).pollInterval(Duration.ofMillis(250)).untilAsserted(() -> {
            for (Node node : running()) {
                ClusterView view = client.cluster(node.api());
                assertThat(view.ring()).as("the ring of %s: %s", node, view).isEqualTo(ring);
                assertThat(view.known()).as("%s found its members: %s", node, view).isTrue();
                assertThat(view.members()).as("the members' data states on %s: %s", node, view)
                        .allSatisfy(member -> assertThat(member.dataState()).isEqualTo("NORMAL"));
                // A peer whose breaker opened while the nodes were starting would fail a request at
                // from/from at once: the cluster is whole once every node reaches every other.
                assertThat(view.members()).as("the members' reachability on %s: %s", node, view)
                        .allSatisfy(member -> assertThat(member.state()).isEqualTo("UP"));
            }
        });
    }

    /** Starts new nodes in parallel, each with a new volume, and waits until every one is ready. */
    public List<Node> start(String... hosts) {
        return start(Map.of(), hosts);
    }

    /**
     * Like {@link #start(String...)}, with settings of their own besides the cluster's. It waits
     * without holding the cluster, so that another thread may pause or stop nodes meanwhile.
     */
    public List<Node> start(Map<String, String> settings, String... hosts) {
        List<Node> started = new ArrayList<>();
        synchronized (this) {
            for (String host : hosts) {
                if (nodes.containsKey(host)) {
                    throw new IllegalArgumentException(host + " exists already");
                }
                String volume = "ringkv-it-" + run + "-" + host;
                docker.createVolumeCmd().withName(volume).withLabels(Map.of(RUN_LABEL, run)).exec();
                volumes.add(volume);
                started.add(newNode(host, volume, settings, ready()));
            }
        }
        startAll(started);
        return started;
    }

    /** The node of that hostname, running or stopped. */
    public synchronized Node node(String host) {
        Node node = nodes.get(host);
        if (node == null) {
            throw new IllegalArgumentException("no node " + host + " (nodes: " + nodes.keySet() + ")");
        }
        return node;
    }

    /** The nodes whose containers run (and are not paused). */
    public synchronized List<Node> running() {
        return nodes.values().stream().filter(node -> !node.stopped && !node.paused).toList();
    }

    /**
     * Like {@code docker pause}: the node's processes are frozen but it keeps its address and its
     * names in DNS, like a hung pod that is still published. Its peers' calls time out.
     */
    public synchronized void pause(String host) {
        Node node = node(host);
        for (int attempt = 1; ; attempt++) {
            try {
                docker.pauseContainerCmd(node.containerId()).exec();
                break;
            } catch (InternalServerErrorException e) {
                // runc gives up freezing a cgroup whose tasks stay busy in the kernel for a moment
                // (a flush to a loaded disk) and leaves it running ("unable to freeze"): seen once
                // on a full test run. Another try a moment later freezes it.
                if (attempt == 3 || !String.valueOf(e.getMessage()).contains("unable to freeze")) {
                    throw e;
                }
                System.out.printf("[container tests] %s did not freeze (%s); trying again%n", host, e.getMessage().strip());
                try {
                    Thread.sleep(500);
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
            }
        }
        node.paused = true;
        System.out.printf("[container tests] %s paused%n", host);
    }

    /** Lets a node paused by {@link #pause} run again. */
    public synchronized void unpause(String host) {
        Node node = node(host);
        docker.unpauseContainerCmd(node.containerId()).exec();
        node.paused = false;
        System.out.printf("[container tests] %s running again%n", host);
    }

    /** Like {@code docker stop}: SIGTERM, then the container stays, with its volume, but has no address. */
    public synchronized void stop(String host) {
        Node node = node(host);
        Instant start = Instant.now();
        docker.stopContainerCmd(node.containerId()).withTimeout(STOP_TIMEOUT_SECONDS).exec();
        node.stopped = true;
        System.out.printf("[container tests] %s stopped in %d ms%n", host, Duration.between(start, Instant.now()).toMillis());
    }

    /**
     * Replaces a node's container with a new one of the same hostname, aliases and volume, but a new
     * address, like a re-created StatefulSet pod; waits until it is ready.
     */
    public synchronized Node recreate(String host) {
        return recreate(host, ready());
    }

    /**
     * Like {@link #recreate(String)}, but waits only until the application has started, not until
     * it is ready: for a node expected to refuse readiness.
     */
    public synchronized Node recreateUnready(String host) {
        return recreate(host, Wait.forLogMessage(".*Started RingkvApplication.*", 1).withStartupTimeout(STARTUP_TIMEOUT));
    }

    /**
     * A strategy of its own per container: a strategy keeps the container it waits for. The
     * readiness group needs no token; over TLS, the wait does not check the certificate.
     */
    private WaitStrategy ready() {
        var readiness = Wait.forHttp("/actuator/health/readiness").forPort(MANAGEMENT_PORT).forStatusCode(200);
        return (secured == null ? readiness : readiness.usingTls().allowInsecure()).withStartupTimeout(STARTUP_TIMEOUT);
    }

    /** A node's name on the ring: its URL inside the network. */
    private String name(String host) {
        return scheme + "://" + host + ":" + API_PORT;
    }

    private Node recreate(String host, WaitStrategy started) {
        Node old = node(host);
        discard(old);
        Node node = newNode(host, old.volume, Map.of(), started);
        startAll(List.of(node));
        return node;
    }

    /**
     * Cuts a running node off the network, like a partition: it keeps running, but reaches no peer,
     * no DNS, and the test cannot reach it either (its published ports go through the network).
     */
    public synchronized void disconnect(String host) {
        Node node = node(host);
        docker.disconnectFromNetworkCmd().withNetworkId(network.getId()).withContainerId(node.containerId()).exec();
        System.out.printf("[container tests] %s cut off the network%n", host);
    }

    /** Connects a node cut off by {@link #disconnect} again, with its address and aliases. */
    public synchronized void reconnect(String host) {
        Node node = node(host);
        docker.connectToNetworkCmd().withNetworkId(network.getId()).withContainerId(node.containerId())
                .withContainerNetwork(new ContainerNetwork().withAliases(SERVICE_NAME, host)
                        .withIpamConfig(new ContainerNetwork.Ipam().withIpv4Address(node.ip)))
                .exec();
        System.out.printf("[container tests] %s back on the network%n", host);
    }

    /** Removes a node for good: its container (stopped gracefully first), its alias and its volume. */
    public synchronized void remove(String host) {
        Node node = node(host);
        if (!node.stopped) {
            stop(host);
        }
        discard(node);
        nodes.remove(host);
        docker.removeVolumeCmd(node.volume).exec();
        volumes.remove(node.volume);
    }

    /**
     * For {@code @RegisterExtension}: when a test fails, prints the tail of every node's log of the
     * cluster the supplier gives (none yet: nothing).
     */
    public static TestWatcher printLogsOnFailure(Supplier<RingkvCluster> cluster) {
        return new TestWatcher() {
            @Override
            public void testFailed(ExtensionContext context, Throwable cause) {
                RingkvCluster current = cluster.get();
                if (current != null) {
                    System.out.println("[container tests] " + context.getDisplayName() + " failed: " + cause
                            + "\nThe nodes' logs:\n" + current.logs());
                }
            }
        };
    }

    /** The last lines of every node's log, those of removed containers included, for failure reports. */
    public synchronized String logs() {
        StringBuilder out = new StringBuilder();
        goneLogs.forEach((title, log) -> section(out, title, log));
        for (Node node : nodes.values()) {
            String log;
            try {
                log = node.container.getLogs();
            } catch (RuntimeException e) {
                log = "(no logs: " + e + ")";
            }
            section(out, node.host + " (container " + node.shortId() + (node.stopped ? ", stopped" : "") + ", " + node.ip + ")", log);
        }
        return out.toString();
    }

    @Override
    public synchronized void close() {
        removeEverything();
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException e) {
            // the JVM is shutting down
        }
    }

    private synchronized void removeEverything() {
        if (closed) {
            return;
        }
        closed = true;
        for (Node node : nodes.values()) {
            try {
                if (node.paused) {
                    docker.unpauseContainerCmd(node.containerId()).exec();
                }
                node.container.stop(); // kills and removes the container and its anonymous volume (/tmp)
            } catch (RuntimeException e) {
                System.out.println("[container tests] could not remove the container of " + node.host + ": " + e);
            }
        }
        nodes.clear();
        for (String volume : volumes) {
            try {
                docker.removeVolumeCmd(volume).exec();
            } catch (NotFoundException e) {
                // gone already
            } catch (RuntimeException e) {
                System.out.println("[container tests] could not remove the volume " + volume + ": " + e);
            }
        }
        volumes.clear();
        try {
            network.close();
        } catch (RuntimeException e) {
            System.out.println("[container tests] could not remove the network ringkv-it-" + run + ": " + e);
        }
    }

    private Node newNode(String host, String volume, Map<String, String> settings, WaitStrategy started) {
        String ip = nextAddress();
        GenericContainer<?> container = new NodeContainer(DockerImageName.parse(image))
                .withNetwork(network)
                .withNetworkAliases(SERVICE_NAME, host)
                .withEnv(environment)
                .withEnv(settings)
                .withEnv("RINGKV_CLUSTER_SELF", name(host))
                .withLabel(RUN_LABEL, run)
                .withExposedPorts(API_PORT, CLUSTER_PORT, MANAGEMENT_PORT)
                .withCreateContainerCmdModifier(cmd -> {
                    cmd.withHostName(host).withIpv4Address(ip);
                    HostConfig hostConfig = cmd.getHostConfig();
                    List<Bind> binds = new ArrayList<>(hostConfig.getBinds() == null ? List.of() : Arrays.asList(hostConfig.getBinds()));
                    binds.add(new Bind(volume, new Volume(DATA_DIR)));
                    if (secured != null) {
                        binds.add(new Bind(secured.directory().toString(), new Volume(SecuredNodes.MOUNT), AccessMode.ro));
                    }
                    hostConfig.withBinds(binds);
                })
                .waitingFor(started);
        Node node = new Node(host, name(host), scheme, volume, ip, container);
        nodes.put(host, node);
        return node;
    }

    private void startAll(List<Node> starting) {
        Instant start = Instant.now();
        try {
            Startables.deepStart(starting.stream().map(node -> node.container)).join();
        } catch (CompletionException | IllegalStateException e) {
            Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
            System.out.println("[container tests] starting " + hosts(starting) + " failed: " + cause + "\n" + logs());
            throw new IllegalStateException("could not start " + hosts(starting) + ": " + cause.getMessage(), cause);
        }
        for (Node node : starting) {
            String actual = node.container.getContainerInfo().getNetworkSettings().getNetworks().values().stream()
                    .map(ContainerNetwork::getIpAddress).findFirst().orElse("?");
            if (!actual.equals(node.ip)) {
                throw new IllegalStateException(node.host + " got the address " + actual + " instead of " + node.ip);
            }
        }
        System.out.printf("[container tests] %s ready in %.1f s (%s)%n", hosts(starting),
                Duration.between(start, Instant.now()).toMillis() / 1000.0,
                String.join(", ", starting.stream().map(node -> node.host + " " + node.ip).toList()));
    }

    /** Removes a node's container but keeps its volume; its log goes to the failure reports. */
    private void discard(Node node) {
        String title = node.host + " (container " + node.shortId() + ", " + node.ip + ", removed)";
        try {
            goneLogs.put(title, node.container.getLogs());
        } catch (RuntimeException e) {
            goneLogs.put(title, "(no logs: " + e + ")");
        }
        node.container.stop();
        node.stopped = true;
    }

    private static List<String> hosts(List<Node> nodes) {
        return nodes.stream().map(Node::host).toList();
    }

    private static void section(StringBuilder out, String title, String log) {
        List<String> lines = log.lines().toList();
        out.append("===== ").append(title).append(": last ").append(Math.min(lines.size(), LOG_TAIL_LINES))
                .append(" of ").append(lines.size()).append(" lines =====\n");
        lines.subList(Math.max(0, lines.size() - LOG_TAIL_LINES), lines.size()).forEach(line -> out.append(line).append('\n'));
    }

    /**
     * A subnet Docker considers free (it picks from its address pools, avoiding the host's routes
     * and other networks), found by letting it choose for a throw-away network; with a subnet given
     * explicitly, containers can be given addresses.
     */
    private String[] freeSubnet() {
        String probe = docker.createNetworkCmd().withName("ringkv-it-" + run + "-probe")
                .withLabels(Map.of(RUN_LABEL, run)).exec().getId();
        try {
            var config = docker.inspectNetworkCmd().withNetworkId(probe).exec().getIpam().getConfig().get(0);
            return new String[] {config.getSubnet(), config.getGateway()};
        } finally {
            docker.removeNetworkCmd(probe).exec();
        }
    }

    private String nextAddress() {
        int offset = nextAddress++;
        byte[] address = subnet.clone();
        int value = ByteBuffer.wrap(address).getInt() + offset;
        ByteBuffer.wrap(address).putInt(value);
        try {
            return InetAddress.getByAddress(address).getHostAddress();
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }

    private static byte[] address(String ip) {
        try {
            return InetAddress.getByName(ip).getAddress();
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException(ip, e);
        }
    }

    /**
     * Reached on loopback when the engine is local (a Unix socket): Testcontainers would otherwise,
     * on a machine that is itself a container (/.dockerenv), go through the docker0 bridge's address.
     */
    private static final class NodeContainer extends GenericContainer<NodeContainer> {

        private static final boolean LOCAL_ENGINE = "unix".equals(
                DockerClientFactory.instance().getTransportConfig().getDockerHost().getScheme());

        NodeContainer(DockerImageName image) {
            super(image);
        }

        @Override
        public String getHost() {
            return LOCAL_ENGINE ? "127.0.0.1" : super.getHost();
        }
    }

    /** One node: a container that answers to a hostname. */
    public static final class Node {
        private final String host;
        private final String name;
        private final String scheme;
        private final String volume;
        private final String ip;
        private final GenericContainer<?> container;
        private volatile boolean stopped;
        private volatile boolean paused;

        private Node(String host, String name, String scheme, String volume, String ip, GenericContainer<?> container) {
            this.host = host;
            this.name = name;
            this.scheme = scheme;
            this.volume = volume;
            this.ip = ip;
            this.container = container;
        }

        public String host() {
            return host;
        }

        /** The node's name on the ring: its URL inside the network. */
        public String name() {
            return name;
        }

        /** The container's address on the cluster network. */
        public String ip() {
            return ip;
        }

        /** The public API as reachable from the test, on loopback. */
        public URI api() {
            return URI.create(scheme + "://" + container.getHost() + ":" + container.getMappedPort(API_PORT));
        }

        /** The node-to-node protocol's port as reachable from the test, on loopback. */
        public java.net.InetSocketAddress clusterAddress() {
            return new java.net.InetSocketAddress(container.getHost(), container.getMappedPort(CLUSTER_PORT));
        }

        /** Actuator, as reachable from the test. */
        public URI management() {
            return URI.create(scheme + "://" + container.getHost() + ":" + container.getMappedPort(MANAGEMENT_PORT));
        }

        public boolean stopped() {
            return stopped;
        }

        /** Everything the node has logged so far. */
        public String logs() {
            return container.getLogs();
        }

        String containerId() {
            return container.getContainerId();
        }

        private String shortId() {
            String id = container.getContainerId();
            return id == null ? "-" : id.substring(0, Math.min(12, id.length()));
        }

        @Override
        public String toString() {
            return host + "@" + ip;
        }
    }
}
