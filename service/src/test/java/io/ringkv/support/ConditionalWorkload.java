package io.ringkv.support;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

import io.ringkv.support.ConditionalClient.Answer;
import io.ringkv.testing.linearizability.Expect;
import io.ringkv.testing.linearizability.HistoryRecorder;
import io.ringkv.testing.linearizability.Operation;
import io.ringkv.testing.linearizability.Result;

/**
 * Clients that contend on a few keys with every kind of request under consensus, through random
 * nodes, recording each operation's call, return and result for a linearizability check
 * ({@code io.ringkv.testing.linearizability}): serial reads; compare-and-set with the tag of the
 * value the client last saw; create-if-absent; conditional deletes; {@code If-Match: *}; and
 * unconditional serial writes. Every value written is unique, so a tag stands for the value it
 * was read with. A request never sent (connection refused) is left out; one without an answer
 * (a timeout, a 5xx) is recorded as unknown: it may or may not have taken effect.
 */
public final class ConditionalWorkload implements AutoCloseable {

    private final Supplier<List<URI>> nodes;
    private final List<String> keys;
    private final ConditionalClient requests;
    private final HistoryRecorder recorder = new HistoryRecorder();
    private final AtomicBoolean stopped = new AtomicBoolean();
    private final List<Thread> threads = new ArrayList<>();
    /** Answers a test did not expect at all (a 400, a 500): each is a failure of its own. */
    private final Map<String, Integer> unexpected = new ConcurrentHashMap<>();
    private final Map<Integer, Integer> statuses = new ConcurrentHashMap<>();

    public ConditionalWorkload(Supplier<List<URI>> nodes, List<String> keys, Duration requestTimeout) {
        this.nodes = nodes;
        this.keys = List.copyOf(keys);
        this.requests = new ConditionalClient(requestTimeout);
    }

    public ConditionalWorkload start(int clients, long seed) {
        for (int id = 0; id < clients; id++) {
            int client = id;
            Random random = new Random(seed * 1_000 + client);
            threads.add(Thread.ofPlatform().name("conditional-client-" + client).start(() -> run(client, random)));
        }
        return this;
    }

    /** Stops the clients, letting each finish (or time out) the request it is in. */
    @Override
    public void close() throws InterruptedException {
        stopped.set(true);
        for (Thread thread : threads) {
            thread.join();
        }
    }

    public List<Operation> history() {
        return recorder.history();
    }

    public Map<String, Integer> unexpected() {
        return Map.copyOf(unexpected);
    }

    /** How many answers of each status came (the client's {@code NO_ANSWER} and {@code NOT_SENT} included). */
    public Map<Integer, Integer> statuses() {
        return Map.copyOf(statuses);
    }

    private void run(int client, Random random) {
        // The value each key had when this client last saw it, with its tag.
        Map<String, Seen> seen = new HashMap<>();
        int sequence = 0;
        while (!stopped.get()) {
            List<URI> all = nodes.get();
            URI node = all.get(random.nextInt(all.size()));
            String key = keys.get(random.nextInt(keys.size()));
            String value = "c" + client + "-" + sequence++;
            Seen known = seen.get(key);
            double pick = random.nextDouble();
            if (pick < 0.30 || (pick < 0.65 && known == null)) {
                serialRead(client, node, key, seen);
            } else if (pick < 0.55) {
                write(client, key, Expect.value(known.value()), Optional.of(value), seen,
                        () -> requests.put(node, key, value, false, "If-Match", known.tag()));
            } else if (pick < 0.65) {
                write(client, key, Expect.value(known.value()), Optional.empty(), seen,
                        () -> requests.delete(node, key, "If-Match", known.tag()));
            } else if (pick < 0.80) {
                write(client, key, Expect.ABSENT, Optional.of(value), seen,
                        () -> requests.put(node, key, value, false, "If-None-Match", "*"));
            } else if (pick < 0.90) {
                write(client, key, Expect.PRESENT, Optional.of(value), seen,
                        () -> requests.put(node, key, value, false, "If-Match", "*"));
            } else {
                write(client, key, Expect.ANY, Optional.of(value), seen, () -> requests.put(node, key, value, true, null, null));
            }
        }
    }

    private record Seen(String value, String tag) {
    }

    private void serialRead(int client, URI node, String key, Map<String, Seen> seen) {
        long call = recorder.now();
        Answer answer = requests.get(node, key, true);
        long returned = recorder.now();
        count(answer);
        switch (answer.status()) {
            case 200 -> {
                recorder.record(Operation.read(client, key, call, returned, Optional.of(answer.body())));
                seen.put(key, new Seen(answer.body(), answer.etag().orElseThrow()));
            }
            case 404 -> {
                recorder.record(Operation.read(client, key, call, returned, Optional.empty()));
                seen.remove(key);
            }
            default -> {
                if (answer.sent()) {
                    expectedFailure(answer, "serial GET");
                    recorder.record(Operation.unknownRead(client, key, call, returned));
                }
            }
        }
    }

    private void write(int client, String key, Expect expect, Optional<String> value, Map<String, Seen> seen, Supplier<Answer> send) {
        long call = recorder.now();
        Answer answer = send.get();
        long returned = recorder.now();
        count(answer);
        Result result = switch (answer.status()) {
            case 201, 202 -> Result.OK;
            case 412 -> Result.FAILED;
            default -> answer.sent() ? Result.UNKNOWN : null;
        };
        if (result == null) {
            return;
        }
        if (result == Result.UNKNOWN) {
            expectedFailure(answer, expect + " write");
        }
        recorder.record(Operation.write(client, key, call, returned, expect, value, result));
        if (result == Result.OK && value.isPresent()) {
            seen.put(key, new Seen(value.get(), answer.etag().orElseThrow()));
        } else {
            // Deleted, or changed by another client (a 412's tag comes without its value), or unknown.
            seen.remove(key);
        }
    }

    private void count(Answer answer) {
        statuses.merge(answer.status(), 1, Integer::sum);
    }

    /** No answer, a 503 or a 504 are what faults cause; any other status is a bug. */
    private void expectedFailure(Answer answer, String request) {
        int status = answer.status();
        if (status != ConditionalClient.NO_ANSWER && status != 503 && status != 504) {
            unexpected.merge(request + " answered " + status + ": " + answer.body(), 1, Integer::sum);
        }
    }
}
