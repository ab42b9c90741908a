package io.ringkv.api;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

import org.springframework.boot.convert.DurationStyle;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.web.reactive.function.server.ServerRequest;

import io.ringkv.conditional.Precondition;
import io.ringkv.overload.OverloadedException;
import io.ringkv.record.KeyedRecord;
import io.ringkv.replication.Placement;
import io.ringkv.replication.ReplicationFactor;

/** Reads and checks the query parameters of the public API; every problem becomes a clear 400. */
public final class EntityRequests {

    private static final String QUERY_ATTRIBUTE = QueryParameters.class.getName();

    private EntityRequests() {
    }

    /**
     * The {@code id} parameter as key bytes: present once, not empty, at most 1 KiB in UTF-8, and
     * without control characters (a newline would make a range's {@code key\nvalue} ambiguous; the
     * node keeps keys that start with one for itself).
     */
    static byte[] key(ServerRequest request) {
        byte[] key = requiredKey(request, "id");
        for (int i = 0; i < key.length; i++) {
            if ((key[i] >= 0 && key[i] < 0x20) || key[i] == 0x7f) {
                throw new BadRequestException(String.format(
                        "'id' has a control character (byte 0x%02x at %d); ids may not contain any, such as a newline", key[i], i));
            }
        }
        return key;
    }

    static byte[] requiredKey(ServerRequest request, String name) {
        String value = single(request, name);
        if (value == null || value.isEmpty()) {
            throw new BadRequestException("the '" + name + "' parameter is required and must not be empty");
        }
        return checkedKey(name, value);
    }

    /** An optional key parameter; null when absent. */
    static byte[] optionalKey(ServerRequest request, String name) {
        String value = single(request, name);
        return value == null ? null : checkedKey(name, value);
    }

    /**
     * The {@code replicas} parameter. Without it, the default of the members that hold data now.
     * With it, {@code from} is checked against every member, those joining included, and
     * {@code ack} against the members that hold data now: while a member pulls its ranges (a
     * wiped or replaced node, a new one) the owners serve what they can
     * ({@link Placement#served}). An {@code ack} that only the members joining will make possible
     * (the seconds after a fresh install, while the later nodes pull their ranges) is worth a
     * retry: 503, not 400.
     */
    static ReplicationFactor replicas(ServerRequest request, Placement placement, int replicationFactor) {
        String replicas = single(request, "replicas");
        ReplicationFactor factor;
        try {
            factor = replicas == null || replicas.isEmpty()
                    ? ReplicationFactor.parse(null, placement.size(), replicationFactor)
                    : ReplicationFactor.parse(replicas, placement.members(), replicationFactor);
        } catch (IllegalArgumentException e) {
            throw new BadRequestException(e.getMessage());
        }
        if (factor.ack() > placement.size()) {
            throw new OverloadedException("replicas: ack=" + factor.ack() + " is more than the " + placement.size()
                    + " nodes holding data now; " + (placement.members() - placement.size())
                    + " more will once they have joined: retry shortly");
        }
        return factor;
    }

    /**
     * The {@code replicas} of a request under consensus: as {@link #replicas}, and {@code ack} a
     * majority of {@code from}, since two rounds must always share a replica (400 otherwise).
     */
    static ReplicationFactor majority(ServerRequest request, Placement placement, int replicationFactor) {
        ReplicationFactor factor = replicas(request, placement, replicationFactor);
        if (2 * factor.ack() <= factor.from()) {
            throw new BadRequestException("replicas: a conditional or serial request needs a majority of its replicas: ack="
                    + factor.ack() + " is not more than half of from=" + factor.from());
        }
        return factor;
    }

    /** Whether the request asks for a linearizable answer: {@code consistency=serial}. */
    static boolean serial(ServerRequest request) {
        String consistency = single(request, "consistency");
        if (consistency == null) {
            return false;
        }
        if (!consistency.equals("serial")) {
            throw new BadRequestException("'consistency' must be serial (a linearizable request), or absent; got '" + consistency + "'");
        }
        return true;
    }

    /** The request's condition, from {@code If-Match} and {@code If-None-Match}; 400 for a header that is no list of tags. */
    static Precondition precondition(ServerRequest request) {
        try {
            return Precondition.parse(request.headers().header(HttpHeaders.IF_MATCH), request.headers().header(HttpHeaders.IF_NONE_MATCH));
        } catch (IllegalArgumentException e) {
            throw new BadRequestException(e.getMessage());
        }
    }

    /**
     * The {@code ttl} parameter: how long a PUT's value lives, in seconds or with a unit (ms, s, m,
     * h, d: {@code 30s}, {@code 5m}, {@code 24h}); at least 1 ms and at most ringkv.max-ttl.
     * Absent: the value never expires.
     */
    static Optional<Duration> ttl(ServerRequest request, Duration max) {
        String ttl = single(request, "ttl");
        if (ttl == null) {
            return Optional.empty();
        }
        Duration parsed;
        try {
            parsed = DurationStyle.SIMPLE.parse(ttl, ChronoUnit.SECONDS);
        } catch (IllegalArgumentException | ArithmeticException e) {
            throw new BadRequestException("'ttl' must be a number of seconds, or a number with a unit (ms, s, m, h or d)"
                    + " such as 30s, 5m or 24h; got '" + ttl + "'");
        }
        if (parsed.toMillis() < 1) {
            throw new BadRequestException("'ttl' must be at least 1 ms; got '" + ttl + "'");
        }
        if (parsed.compareTo(max) > 0) {
            throw new BadRequestException("'ttl' must be at most ringkv.max-ttl (" + max.toSeconds() + " s); got '" + ttl + "'");
        }
        return Optional.of(parsed);
    }

    /** 400 for a {@code ttl} on a request other than a PUT: only a write of a value sets one. */
    static void noTtl(ServerRequest request) {
        if (single(request, "ttl") != null) {
            throw new BadRequestException("'ttl' is for a PUT, which writes the value that expires; a " + request.method()
                    + " takes none");
        }
    }

    /** The range bounds; {@code end} is null for "to the last key". */
    static byte[][] range(ServerRequest request) {
        byte[] start = requiredKey(request, "start");
        byte[] end = optionalKey(request, "end");
        if (end != null && Arrays.compareUnsigned(end, start) < 0) {
            throw new BadRequestException("'end' must not come before 'start'");
        }
        return new byte[][] {start, end};
    }

    private static byte[] checkedKey(String name, String value) {
        byte[] key = value.getBytes(StandardCharsets.UTF_8);
        if (key.length > KeyedRecord.MAX_KEY_BYTES) {
            throw new BadRequestException("'" + name + "' is " + key.length + " bytes; keys are at most " + KeyedRecord.MAX_KEY_BYTES);
        }
        return key;
    }

    private static String single(ServerRequest request, String name) {
        List<String> values = query(request).all(name);
        if (values.isEmpty()) {
            return null;
        }
        if (values.size() > 1) {
            throw new BadRequestException(HttpStatus.BAD_REQUEST, "the '" + name + "' parameter must be given once");
        }
        return values.get(0);
    }

    /** Decoded once per request, however many parameters the handler reads. */
    private static QueryParameters query(ServerRequest request) {
        Object parsed = request.attributes().get(QUERY_ATTRIBUTE);
        if (parsed == null) {
            parsed = QueryParameters.parse(request.uri().getRawQuery());
            request.attributes().put(QUERY_ATTRIBUTE, parsed);
        }
        return (QueryParameters) parsed;
    }
}
