package io.ringkv.support;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import io.ringkv.record.Record;


/**
 * Data safety the Jepsen way: writers PUT and DELETE, each over keys of its own (so that a key's
 * history is sequential), through a random node, and record every operation and whether it was
 * acknowledged. Afterwards every key is read back and checked against its history (an
 * acknowledged write may only be replaced by a later operation, acknowledged or not: anything
 * else is <em>lost</em>), and a census reads each replica's own copy and counts the keys where
 * one is not the newest (<em>stale</em>).
 *
 * <p>A request that got no answer may still be read by its node later, and stamped then: a node
 * frozen by SIGSTOP, or cut off by a partition, reads what waited in its socket when it comes back,
 * after the writer has moved on. Stamped after the key's next writes, it wins over them, as last
 * write wins says it must: it is the latest write. Its writer cannot know when that happens, so
 * it leaves such a key alone for {@link #QUARANTINE}, longer than any stall the tests inject
 * (as the e2e write checker does); its later operations on the key are then really later.
 *
 * <p>{@link #readingBack()} has each writer also read one of its keys after each write, through a
 * random node, while the load runs: a read that shows an operation before the last one
 * acknowledged when it was sent is <em>stale</em> (quorum reads must see every acknowledged write).
 */
public final class WriteHistory {

    /** An outcome: a connection refused, the node not listening, as while it is stopped. */
    public static final String REFUSED = "connection refused";
    /** Before an outcome that was no answer from a node that was stopping. */
    public static final String STOPPING = "no answer from a stopping node: ";
    /** How long a writer leaves a key alone after a request on it got no answer: a 30 s partition, and more. */
    static final Duration QUARANTINE = Duration.ofSeconds(45);
    /** What {@link #send} returns when nothing was sent (the connection was refused). */
    private static final int NOT_SENT = -1;
    /** What {@link #send} returns when the request was sent and got no answer: it may still be applied, later. */
    private static final int NO_ANSWER = -2;

    /** One PUT (value) or DELETE (null value), and whether the cluster acknowledged it. */
    private record Operation(String value, boolean acknowledged) {
    }

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private final Map<String, List<Operation>> history = new ConcurrentHashMap<>();
    private final AtomicBoolean running = new AtomicBoolean();
    private final Map<String, LongAdder> outcomes = new ConcurrentHashMap<>();
    /** Counted as the writers go, so that a test can wait for the load while it runs. */
    private final LongAdder acknowledged = new LongAdder();
    private final String replicas;
    private final Predicate<URI> stopping;
    private volatile boolean readsBack;
    private final Map<String, LongAdder> readOutcomes = new ConcurrentHashMap<>();
    private final List<String> staleReads = Collections.synchronizedList(new ArrayList<>());
    private ExecutorService writers;

    /** @param replicas the {@code replicas} parameter of every request; null: the cluster's default */
    public WriteHistory(String replicas) {
        this(replicas, node -> false);
    }

    /**
     * @param stopping whether a node is stopping (from its SIGTERM until it serves again): a request
     *                 to it that got no answer at all is counted apart, with the refused connections
     */
    public WriteHistory(String replicas, Predicate<URI> stopping) {
        this.replicas = replicas;
        this.stopping = stopping;
    }

    /** Starts the writers, each one operation at a time through a node the supplier names, until {@link #stop}. */
    public void start(Supplier<List<URI>> nodes, int writerCount, int keysPerWriter) {
        running.set(true);
        writers = Executors.newFixedThreadPool(writerCount);
        for (int w = 0; w < writerCount; w++) {
            int writer = w;
            writers.submit(() -> {
                ThreadLocalRandom random = ThreadLocalRandom.current();
                Map<String, Long> unansweredUntil = new HashMap<>();
                for (int seq = 0; running.get(); seq++) {
                    String key = "w" + writer + "-k" + random.nextInt(keysPerWriter);
                    Long leftAloneUntil = unansweredUntil.get(key);
                    if (leftAloneUntil != null && leftAloneUntil - System.nanoTime() > 0) {
                        sleepBriefly();
                        continue;
                    }
                    boolean delete = random.nextInt(5) == 0;
                    String value = delete ? null : key + "-" + seq;
                    List<URI> choices = nodes.get();
                    int status = send(choices.get(random.nextInt(choices.size())), key, value);
                    if (status == NO_ANSWER) {
                        unansweredUntil.put(key, System.nanoTime() + QUARANTINE.toNanos());
                    }
                    boolean acknowledgedNow = status == (delete ? 202 : 201);
                    history.computeIfAbsent(key, k -> new ArrayList<>()).add(new Operation(value, acknowledgedNow));
                    if (acknowledgedNow) {
                        acknowledged.increment();
                    }
                    if (readsBack) {
                        String read = "w" + writer + "-k" + random.nextInt(keysPerWriter);
                        if (!unansweredUntil.containsKey(read)) {
                            readBack(choices.get(random.nextInt(choices.size())), read);
                        }
                    }
                }
            });
        }
    }

    /** Each writer also reads one of its keys after each write (see the class comment). Before {@link #start}. */
    public WriteHistory readingBack() {
        readsBack = true;
        return this;
    }

    /**
     * Reads a key of this writer's and checks the answer against its history so far: the key's
     * last acknowledged operation or a later one (only a request that got no answer is later and
     * unknown: such keys are left out).
     */
    private void readBack(URI node, String key) {
        List<Operation> operations = history.getOrDefault(key, List.of());
        int lastAcknowledged = IntStream.range(0, operations.size()).filter(i -> operations.get(i).acknowledged()).max().orElse(-1);
        HttpResponse<String> read;
        try {
            read = http.send(HttpRequest.newBuilder(node.resolve(query(key))).timeout(Duration.ofSeconds(3)).build(),
                    HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            readOutcomes.computeIfAbsent(e.getClass().getSimpleName(), ignored -> new LongAdder()).increment();
            return;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        }
        readOutcomes.computeIfAbsent("HTTP " + read.statusCode(), ignored -> new LongAdder()).increment();
        if (lastAcknowledged < 0 || (read.statusCode() != 200 && read.statusCode() != 404)) {
            return;
        }
        String seen = read.statusCode() == 200 ? read.body() : null;
        if (operations.subList(lastAcknowledged, operations.size()).stream().noneMatch(operation -> Objects.equals(operation.value(), seen))) {
            staleReads.add(key + " read " + seen + " through " + node + " after " + operations.get(lastAcknowledged).value()
                    + " was acknowledged");
        }
    }

    /** How the reads back ended, counted as {@link #outcomes()}. */
    public Map<String, Long> readOutcomes() {
        return new TreeMap<>(readOutcomes.entrySet().stream()
                .collect(Collectors.toMap(Map.Entry::getKey, entry -> entry.getValue().sum())));
    }

    /** The reads back that failed: every answer but 200 and 404, and every read that got none. */
    public Map<String, Long> readFailures() {
        Map<String, Long> failures = readOutcomes();
        failures.keySet().removeIf(outcome -> outcome.equals("HTTP 200") || outcome.equals("HTTP 404"));
        return failures;
    }

    /** The reads back that showed an operation older than the last acknowledged one. */
    public List<String> staleReads() {
        return List.copyOf(staleReads);
    }

    public void stop() throws InterruptedException {
        running.set(false);
        writers.shutdown();
        assertThat(writers.awaitTermination(30, TimeUnit.SECONDS)).as("the writers stopped").isTrue();
    }

    public long operations() {
        return history.values().stream().mapToLong(List::size).sum();
    }

    /** The operations acknowledged so far; may be read while the writers run. */
    public long acknowledged() {
        return acknowledged.sum();
    }

    private String query(String key) {
        return "/v0/entity?id=" + key + (replicas == null ? "" : "&replicas=" + replicas);
    }

    /**
     * How the requests ended, counted: {@code HTTP 201}, {@code HTTP 504}, ...; {@link #REFUSED} for a
     * connection the node refused (it is stopped); otherwise the exception's class (a timeout, a
     * connection closed under a request), after {@link #STOPPING} if the node was stopping.
     */
    public Map<String, Long> outcomes() {
        return new TreeMap<>(outcomes.entrySet().stream()
                .collect(Collectors.toMap(Map.Entry::getKey, entry -> entry.getValue().sum())));
    }

    /**
     * The requests that failed: every answer other than 2xx, and every request that got no answer
     * at all (timed out, or its connection closed under it), but those to a node that was stopping
     * (refused, or closed as it stopped): a client that addresses a stopping node itself meets
     * those, one behind a load balancer is sent elsewhere first.
     */
    public Map<String, Long> failures() {
        Map<String, Long> failures = outcomes();
        failures.keySet().removeIf(outcome -> outcome.equals(REFUSED) || outcome.startsWith(STOPPING) || outcome.startsWith("HTTP 2"));
        return failures;
    }

    private int send(URI node, String key, String value) {
        HttpRequest.BodyPublisher body = value == null ? HttpRequest.BodyPublishers.noBody()
                : HttpRequest.BodyPublishers.ofString(value);
        try {
            int status = http.send(HttpRequest.newBuilder(node.resolve(query(key)))
                    .timeout(Duration.ofSeconds(3)).method(value == null ? "DELETE" : "PUT", body).build(),
                    HttpResponse.BodyHandlers.discarding()).statusCode();
            count("HTTP " + status);
            return status;
        } catch (ConnectException e) {
            count(REFUSED);
            return NOT_SENT; // the node is stopped
        } catch (IOException e) {
            // A stopping node may close a connection as a request arrives on it; a timeout is no such thing.
            boolean closedAsItStopped = stopping.test(node) && !(e instanceof HttpTimeoutException);
            count((closedAsItStopped ? STOPPING : "") + e.getClass().getSimpleName() + ": " + e.getMessage());
            return NO_ANSWER; // a node down, paused or cut off: not acknowledged, but it may be applied
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return NOT_SENT;
        }
    }

    /** A writer whose drawn key is left alone draws again a little later, not in a busy loop. */
    private static void sleepBriefly() {
        try {
            Thread.sleep(10);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void count(String outcome) {
        outcomes.computeIfAbsent(outcome, ignored -> new LongAdder()).increment();
    }

    /** Keys whose read through the node shows neither the last acknowledged operation nor a later one. */
    public List<String> lost(URI reader) throws IOException, InterruptedException {
        List<String> lost = new ArrayList<>();
        for (var entry : history.entrySet()) {
            List<Operation> operations = entry.getValue();
            int lastAcknowledged = IntStream.range(0, operations.size()).filter(i -> operations.get(i).acknowledged())
                    .max().orElse(-1);
            if (lastAcknowledged < 0) {
                continue;
            }
            HttpResponse<String> read = http.send(HttpRequest.newBuilder(reader.resolve(query(entry.getKey()))).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(read.statusCode()).as(entry.getKey()).isIn(200, 404);
            String seen = read.statusCode() == 200 ? read.body() : null;
            boolean allowed = operations.subList(lastAcknowledged, operations.size()).stream()
                    .anyMatch(operation -> Objects.equals(operation.value(), seen));
            if (!allowed) {
                int earlier = IntStream.range(0, lastAcknowledged).filter(i -> Objects.equals(operations.get(i).value(), seen))
                        .max().orElse(-1);
                lost.add(entry.getKey() + " reads " + seen + (earlier < 0 ? " (never written)" : " (operation " + earlier
                        + (operations.get(earlier).acknowledged() ? ", acknowledged)" : ", not acknowledged)"))
                        + ", last acknowledged " + operations.get(lastAcknowledged).value() + " (operation " + lastAcknowledged
                        + " of " + operations.size() + ")");
            }
        }
        return lost;
    }

    /** The keys written so far. */
    public List<String> keys() {
        return List.copyOf(history.keySet());
    }

    /** Keys where some replica's own copy (each function reads one replica's) is not the newest of them. */
    public List<String> stale(List<Function<byte[], Optional<Record>>> replicaCopies) {
        List<String> stale = new ArrayList<>();
        for (String key : history.keySet()) {
            byte[] bytes = key.getBytes(StandardCharsets.UTF_8);
            List<Optional<Record>> copies = replicaCopies.stream().map(copy -> copy.apply(bytes)).toList();
            long newest = copies.stream().flatMap(Optional::stream).mapToLong(Record::timestamp).max().orElse(-1);
            if (copies.stream().anyMatch(copy -> copy.map(Record::timestamp).orElse(-1L) != newest)) {
                stale.add(key);
            }
        }
        return stale;
    }
}
