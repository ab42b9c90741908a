package io.ringkv.discovery;

import java.net.InetAddress;
import java.net.URI;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import java.util.function.Function;
import java.util.function.Supplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioDatagramChannel;
import io.netty.resolver.dns.DnsNameResolver;
import io.netty.resolver.dns.DnsNameResolverBuilder;
import io.netty.util.concurrent.Future;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import io.ringkv.ring.ClusterMembership;
import io.ringkv.ring.Member;

/**
 * Finds the members through a DNS name that resolves to every node's address: a Kubernetes
 * headless Service, or a Docker network alias. Each round it resolves that name with Netty's
 * non-blocking resolver (which honours the records' TTLs up to the refresh interval; the JVM's
 * own DNS cache is not involved), asks each new address for its node's stable name, probes the
 * current members, and hands what it saw to {@link MembershipTracker}, which damps the changes.
 * Where the cluster's intent can be asked (on Kubernetes, the StatefulSet's {@code spec.replicas}),
 * it is asked each round too, and decides who is on the ring.
 */
public final class DnsDiscovery implements SmartLifecycle {

    private static final Logger log = LoggerFactory.getLogger(DnsDiscovery.class);

    private final ClusterMembership membership;
    private final MembershipTracker tracker;
    private final String dnsName;
    private final int port;
    private final String scheme;
    private final Duration refreshInterval;
    private final Function<URI, Mono<String>> identify;
    private final Function<String, Mono<Optional<Member>>> probe;
    /** The members the cluster is meant to have, asked each round; null where nothing says. */
    private final Supplier<Mono<Set<String>>> intent;
    /** The last intent learned: kept while it cannot be asked (the API server briefly away). */
    private volatile Set<String> intended;
    private final Map<String, String> nameByAddress = new ConcurrentHashMap<>();
    private final EventLoopGroup dnsLoop = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    private final DnsNameResolver resolver;
    private final Duration bootstrapTimeout;
    private volatile long startedNanos = System.nanoTime();
    private volatile Disposable rounds;

    /**
     * @param identify asks the node at a base URL for its name
     * @param probe    calls a member by its name: the member as it tells itself, empty if it did not answer
     * @param intent   the members the cluster is meant to have (a StatefulSet's), asked each round;
     *                 null: none, the ring follows who answers ({@link MembershipTracker})
     */
    public DnsDiscovery(ClusterMembership membership, String dnsName, Duration refreshInterval, int removalAfter,
            Duration bootstrapTimeout, Function<URI, Mono<String>> identify, Function<String, Mono<Optional<Member>>> probe,
            Supplier<Mono<Set<String>>> intent) {
        this.intent = intent;
        this.bootstrapTimeout = bootstrapTimeout;
        this.membership = membership;
        this.tracker = new MembershipTracker(membership.selfMember(), removalAfter);
        this.dnsName = dnsName;
        URI self = URI.create(membership.self());
        this.port = self.getPort();
        this.scheme = self.getScheme();
        this.refreshInterval = refreshInterval;
        this.identify = identify;
        this.probe = probe;
        // Records are cached for their TTL, but never longer than one round: Docker's DNS answers
        // with a TTL of 600 s, which would hide a node that left or came back for ten minutes.
        int maxTtlSeconds = (int) Math.max(1, refreshInterval.toSeconds());
        this.resolver = new DnsNameResolverBuilder(dnsLoop.next())
                .datagramChannelType(NioDatagramChannel.class)
                .ttl(0, maxTtlSeconds)
                .negativeTtl(0)
                .build();
    }

    /** The address a member was last discovered at, if any. */
    public String addressOf(String member) {
        return nameByAddress.entrySet().stream()
                .filter(entry -> entry.getValue().equals(member))
                .map(Map.Entry::getKey)
                .findFirst()
                .orElse(null);
    }

    Mono<Void> round() {
        return Mono.zip(resolveAll(dnsName), askIntent())
                .flatMap(found -> {
                    List<String> addresses = found.getT1();
                    Set<String> meant = found.getT2().orElse(null);
                    // An address gone from DNS may come back as another pod: forget whose it was.
                    nameByAddress.keySet().retainAll(Set.copyOf(addresses));
                    return Flux.fromIterable(addresses)
                            .flatMap(this::nameAt)
                            .collect(Collectors.toSet())
                            .flatMap(names -> probeMembers(names, meant)
                                    .map(seen -> new Round(addresses.size() - (names.contains(membership.self()) ? 1 : 0), seen, meant)));
                })
                .doOnNext(round -> {
                    Set<String> departed = membership.ring().names().stream()
                            .filter(member -> membership.state(member).departing())
                            .collect(Collectors.toSet());
                    tracker.observe(round.seen().answered(), round.seen().listed(), departed, round.intended())
                            .ifPresent(membership::update);
                    if (!membership.isKnown()) {
                        passBootstrapGate(round);
                    }
                })
                .then();
    }

    /** The intended members this round: asked afresh, or the last ones learned while they cannot be. */
    private Mono<Optional<Set<String>>> askIntent() {
        if (intent == null) {
            return Mono.just(Optional.empty());
        }
        return intent.get()
                .timeout(refreshInterval)
                .doOnNext(members -> {
                    if (!members.equals(intended)) {
                        log.info("the cluster is meant to have {} members: {}", members.size(), new TreeSet<>(members));
                        intended = Set.copyOf(members);
                    }
                })
                .map(Optional::of)
                .onErrorResume(error -> {
                    log.warn("could not learn the intended members this round ({}): {}", error.toString(),
                            intended == null ? "the ring follows who answers" : "keeping the last ones learned");
                    return Mono.just(Optional.ofNullable(intended));
                });
    }

    private record Seen(Set<Member> answered, Set<String> listed) {
    }

    /**
     * @param listedOthers addresses DNS listed besides this node's own
     * @param intended     the members the cluster is meant to have; null where nothing says
     */
    private record Round(int listedOthers, Seen seen, Set<String> intended) {
    }

    /** The ring is known (and the node ready) once the round reached enough members, or after the bootstrap timeout. */
    private void passBootstrapGate(Round round) {
        int answered = round.seen().answered().size();
        if (MembershipTracker.reachedEnough(round.listedOthers(), answered)) {
            log.info("reached {} of the {} other members DNS lists: the ring is {}", answered, round.listedOthers(),
                    membership.ring().names());
            membership.markKnown();
        } else if (System.nanoTime() - startedNanos >= bootstrapTimeout.toNanos()) {
            log.warn("reached only {} of the {} other members DNS lists within {} (ringkv.cluster.discovery.bootstrap-timeout):"
                    + " serving with the ring {}", answered, round.listedOthers(), bootstrapTimeout, membership.ring().names());
            membership.markKnown();
        } else {
            log.info("waiting to reach the other members DNS lists ({} of {} answered) before serving",
                    answered, round.listedOthers());
        }
    }

    /** Asks a new address for its name once; a known address keeps the name it gave. */
    private Mono<String> nameAt(String address) {
        String known = nameByAddress.get(address);
        if (known != null) {
            return Mono.just(known);
        }
        return identify.apply(URI.create(scheme + "://" + hostLiteral(address) + ":" + port))
                .doOnNext(name -> nameByAddress.put(address, name))
                .onErrorResume(error -> {
                    log.debug("{} did not tell its name: {}", address, error.toString());
                    return Mono.empty();
                });
    }

    /**
     * Probes every member, every newly listed name and every intended one. A member that does not
     * answer is still listed when its own name resolves: down, but not gone.
     */
    private Mono<Seen> probeMembers(Set<String> listedByAddress, Set<String> meant) {
        Set<String> candidates = new HashSet<>(membership.ring().names());
        candidates.addAll(listedByAddress);
        if (meant != null) {
            candidates.addAll(meant);
        }
        candidates.remove(membership.self());
        Set<Member> answered = ConcurrentHashMap.newKeySet();
        Set<String> listed = ConcurrentHashMap.newKeySet();
        listed.addAll(listedByAddress);
        return Flux.fromIterable(candidates)
                .flatMap(name -> probe.apply(name)
                        .onErrorReturn(Optional.empty())
                        .flatMap(told -> {
                            if (told.isPresent()) {
                                answered.add(told.get());
                                listed.add(name);
                                return Mono.empty();
                            }
                            // Bounded well inside the round: a DNS server that does not answer
                            // for a missing name (an unreachable upstream) must not fail the round
                            // and so keep every down member on the ring for good.
                            return resolveAll(URI.create(name).getHost())
                                    .timeout(refreshInterval)
                                    .doOnNext(addresses -> {
                                        if (!addresses.isEmpty()) {
                                            listed.add(name);
                                        }
                                    })
                                    .onErrorResume(error -> Mono.empty())
                                    .then();
                        }))
                .then(Mono.fromSupplier(() -> new Seen(Set.copyOf(answered), Set.copyOf(listed))));
    }

    private Mono<List<String>> resolveAll(String host) {
        return Mono.<List<InetAddress>>create(sink -> {
            Future<List<InetAddress>> lookup = resolver.resolveAll(host);
            lookup.addListener(done -> {
                if (lookup.isSuccess()) {
                    sink.success(lookup.getNow());
                } else {
                    sink.error(lookup.cause());
                }
            });
        }).map(addresses -> addresses.stream().map(InetAddress::getHostAddress).distinct().toList());
    }

    private static String hostLiteral(String address) {
        return address.contains(":") ? "[" + address + "]" : address;
    }

    /**
     * Stops after the other background work: a node leaving the cluster keeps seeing its peers'
     * states while it hands its data over ({@code DataMovement} stops first).
     */
    @Override
    public int getPhase() {
        return DEFAULT_PHASE - 100;
    }

    @Override
    public void start() {
        startedNanos = System.nanoTime();
        rounds = Flux.interval(Duration.ZERO, refreshInterval)
                .onBackpressureDrop()
                .concatMap(tick -> round()
                        .timeout(refreshInterval.multipliedBy(3))
                        .onErrorResume(error -> {
                            log.warn("discovery through {} failed this round: {}", dnsName, error.toString());
                            return Mono.empty();
                        }), 1)
                .subscribe();
        log.info("discovering members through {} every {}", dnsName, refreshInterval);
    }

    @Override
    public void stop() {
        if (rounds != null) {
            rounds.dispose();
        }
        resolver.close();
        dnsLoop.shutdownGracefully(0, 1, java.util.concurrent.TimeUnit.SECONDS);
    }

    @Override
    public boolean isRunning() {
        return rounds != null && !rounds.isDisposed();
    }
}
