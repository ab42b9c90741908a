package io.ringkv.api;

import java.time.Duration;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.LongFunction;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferFactory;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.BodyExtractors;
import org.springframework.web.reactive.function.BodyInserters;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;

import io.ringkv.conditional.ConditionalCoordinator;
import io.ringkv.conditional.EntityTag;
import io.ringkv.conditional.Outcome;
import io.ringkv.conditional.Precondition;
import io.ringkv.overload.AdmissionControl;
import io.ringkv.overload.OverloadedException;
import io.ringkv.record.HybridClock;
import io.ringkv.record.KeyedRecord;
import io.ringkv.record.Record;
import io.ringkv.record.RecordCodec;
import io.ringkv.replication.Coordinator;
import io.ringkv.replication.Deadlines;
import io.ringkv.replication.Placement;
import io.ringkv.replication.ReplicationFactor;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The entity operations of the public API. Every node serves every request and coordinates it;
 * this class only reads and checks the request and maps the answer of the {@link Coordinator}
 * (plain requests, last write wins) or of the {@link ConditionalCoordinator} (requests with a
 * condition or {@code consistency=serial}, under consensus) to HTTP.
 */
final class EntityHandler {

    /** A PUT whose body has arrived: it is only now work for the node. Its bytes are held until the last replica ends. */
    record ArrivedPut(ServerRequest request, byte[] key, byte[] value, AdmissionControl.Held held) {
    }

    /** A GET's answer for a value that expires: the seconds it has left, rounded up. */
    static final String TTL_HEADER = "Ringkv-TTL";

    private final Coordinator coordinator;
    private final ConditionalCoordinator conditional;
    private final AdmissionControl admission;
    private final HybridClock clock;
    private final ApiRoutes.Settings settings;

    EntityHandler(Coordinator coordinator, ConditionalCoordinator conditional, AdmissionControl admission, HybridClock clock,
            ApiRoutes.Settings settings) {
        this.coordinator = coordinator;
        this.conditional = conditional;
        this.admission = admission;
        this.clock = clock;
        this.settings = settings;
    }

    /**
     * The replicas' answers are held against ringkv.overload.max-bytes-in-flight as they arrive and
     * until the response is written and the last replica call has ended: 200 concurrent reads of
     * 4 MiB values gathered more than the heap and killed the node; a read whose first answer finds
     * no room gets 503 at once.
     */
    Mono<ServerResponse> get(ServerRequest request) {
        byte[] key = EntityRequests.key(request);
        EntityRequests.noTtl(request);
        Placement placement = coordinator.placement();
        if (EntityRequests.serial(request)) {
            var factor = EntityRequests.majority(request, placement, coordinator.replicationFactor());
            return conditional.read(key, factor, placement).flatMap(outcome -> found(((Outcome.Read) outcome).current()));
        }
        var factor = EntityRequests.replicas(request, placement, coordinator.replicationFactor());
        if (!admission.hasRoomFor(1)) {
            // Full already: refused before its replicas read and send values it could not keep.
            throw OverloadedException.bytesInFlight();
        }
        AdmissionControl.Held held = admission.held();
        ExchangeCompletion.onComplete(request, held::release);
        return coordinator.get(key, factor, placement, held).flatMap(this::found);
    }

    /**
     * 200 with the value, its version's tag, and for a value that expires the seconds it has left;
     * 404 for nothing (the coordinators pass only a live value: no tombstone, nothing expired).
     */
    private Mono<ServerResponse> found(Optional<Record> live) {
        if (live.isEmpty()) {
            return ServerResponse.notFound().build();
        }
        Record record = live.get();
        var response = ServerResponse.ok().eTag(EntityTag.of(record)).contentType(MediaType.APPLICATION_OCTET_STREAM);
        if (record.expiresAt() != Record.NEVER) {
            long leftMillis = Math.max(1, record.expiresAt() - clock.physicalNow());
            response.header(TTL_HEADER, Long.toString((leftMillis + 999) / 1000));
        }
        return response.bodyValue(record.valueBuffer());
    }

    /**
     * A PUT's first part: checks the request and waits for its body, within ringkv.max-value-size
     * and ringkv.overload.body-timeout. A client slot is taken only once the body is here, so
     * clients whose bodies trickle in (or stop) cannot lock the others out; the body's bytes are
     * held against ringkv.overload.max-bytes-in-flight from their arrival.
     */
    Mono<ArrivedPut> arrive(ServerRequest request) {
        byte[] key = EntityRequests.key(request);
        // Bad parameters are refused before the body is waited for; checked again with the ring of the moment in put.
        factor(request, coordinator.placement());
        EntityRequests.ttl(request, settings.maxTtl());
        long declared = request.headers().contentLength().orElse(-1);
        if (declared > settings.maxValueBytes()) {
            throw tooLarge();
        }
        if (declared > 0 && !admission.hasRoomFor(declared)) {
            // Refused before a byte of it is read, rather than read and thrown away.
            throw OverloadedException.bytesInFlight();
        }
        // The body's bytes count against ringkv.overload.max-bytes-in-flight as they arrive, so a
        // client that trickles holds only what it sent; past the bound, 503 at once.
        AdmissionControl.Held held = admission.held();
        ExchangeCompletion.onComplete(request, held::release);
        Flux<DataBuffer> body = request.body(BodyExtractors.toDataBuffers()).doOnNext(buffer -> {
            if (!held.tryAdd(buffer.readableByteCount())) {
                DataBufferUtils.release(buffer);
                throw OverloadedException.bytesInFlight();
            }
        });
        return DataBufferUtils.join(body, settings.maxValueBytes())
                .timeout(Deadlines.delay(settings.bodyTimeout()), Mono.error(() -> new BadRequestException(HttpStatus.REQUEST_TIMEOUT,
                        "the body did not arrive within ringkv.overload.body-timeout (" + settings.bodyTimeout().toMillis() + " ms)")))
                .onErrorMap(DataBufferLimitException.class, error -> tooLarge())
                .map(EntityHandler::drain)
                .defaultIfEmpty(new byte[0])
                .map(value -> {
                    if (ConnectionHooks.bodyBroken(request)) {
                        throw new BadRequestException("the body's chunked encoding is broken; nothing was stored");
                    }
                    return new ArrivedPut(request, key, value, held);
                });
    }

    Mono<ServerResponse> put(ArrivedPut put) {
        Placement placement = coordinator.placement();
        LongFunction<Record> version = version(put, placement);
        if (underConsensus(put.request())) {
            return conditional(put.request(), put.key(), version, placement,
                    applied -> ServerResponse.status(HttpStatus.CREATED).eTag(EntityTag.of(applied)).build());
        }
        var factor = EntityRequests.replicas(put.request(), placement, coordinator.replicationFactor());
        // The replicas hold the bytes too, past the answer, until the slowest has ended.
        return Mono.defer(() -> {
                    put.held().retain();
                    try {
                        return coordinator.put(put.key(), version, factor, placement, put.held()::release);
                    } catch (RuntimeException e) {
                        put.held().release(); // no replica was asked: nobody else will let go
                        throw e;
                    }
                })
                .then(ServerResponse.status(HttpStatus.CREATED).build());
    }

    /**
     * The version a PUT writes once the coordinator stamps it: its value, expiring after its
     * {@code ttl} if it has one. A value that expires is written only once every member reads
     * its form; until then (a rolling upgrade) such a PUT gets 503, and retries.
     */
    private LongFunction<Record> version(ArrivedPut put, Placement placement) {
        byte[] value = put.value();
        Optional<Duration> ttl = EntityRequests.ttl(put.request(), settings.maxTtl());
        if (ttl.isEmpty()) {
            return timestamp -> Record.value(timestamp, value);
        }
        if (!placement.everyMember(member -> member.recordFormat() >= RecordCodec.FORMAT_EXPIRING)) {
            throw new RetryLaterException("ttl: not every member runs a version that keeps values that expire (a rolling"
                    + " upgrade, or a member that has not told its version yet): retry once every one does");
        }
        Duration lifetime = ttl.get();
        return timestamp -> Record.expiringAfter(timestamp, value, lifetime);
    }

    Mono<ServerResponse> delete(ServerRequest request) {
        byte[] key = EntityRequests.key(request);
        EntityRequests.noTtl(request);
        Placement placement = coordinator.placement();
        if (underConsensus(request)) {
            return conditional(request, key, Record::tombstone, placement,
                    applied -> ServerResponse.status(HttpStatus.ACCEPTED).build());
        }
        var factor = EntityRequests.replicas(request, placement, coordinator.replicationFactor());
        return coordinator.delete(key, factor, placement).then(ServerResponse.status(HttpStatus.ACCEPTED).build());
    }

    /** A write with a condition, or with {@code consistency=serial}, goes through consensus. */
    private static boolean underConsensus(ServerRequest request) {
        return !EntityRequests.precondition(request).isNone() || EntityRequests.serial(request);
    }

    /** The request's factor, checked as its kind needs: a request under consensus needs a majority. */
    private ReplicationFactor factor(ServerRequest request, Placement placement) {
        return underConsensus(request)
                ? EntityRequests.majority(request, placement, coordinator.replicationFactor())
                : EntityRequests.replicas(request, placement, coordinator.replicationFactor());
    }

    /**
     * A write under consensus: {@code applied} answers once it is chosen; a condition that did
     * not hold is 412 with the current version's tag, and changed nothing.
     */
    private Mono<ServerResponse> conditional(ServerRequest request, byte[] key, LongFunction<Record> update, Placement placement,
            Function<Record, Mono<ServerResponse>> applied) {
        Precondition precondition = EntityRequests.precondition(request);
        var factor = EntityRequests.majority(request, placement, coordinator.replicationFactor());
        return conditional.write(key, precondition, update, factor, placement).flatMap(outcome -> switch (outcome) {
            case Outcome.Applied done -> applied.apply(done.record());
            case Outcome.Refused refused -> preconditionFailed(refused.current());
            case Outcome.Read read -> throw new IllegalStateException("a write answered as a read");
        });
    }

    private static Mono<ServerResponse> preconditionFailed(Optional<Record> current) {
        Optional<String> tag = current.filter(record -> !record.tombstone()).map(EntityTag::of);
        var response = ServerResponse.status(HttpStatus.PRECONDITION_FAILED).contentType(MediaType.TEXT_PLAIN);
        tag.ifPresent(response::eTag);
        return response.bodyValue(tag.isPresent()
                ? "the condition did not hold: the key's version is " + tag.get() + "; nothing was changed"
                : "the condition did not hold: the key is absent; nothing was changed");
    }

    /**
     * Streams the range with one HTTP chunk per record, {@code key\nvalue}; backpressure reaches the
     * replicas' iterators, so a slow client slows the scan instead of filling the heap. Each chunk
     * is made only once the connection has room for it: the server would otherwise take up to 128
     * chunks ahead of a slow client, which with large values is hundreds of megabytes.
     */
    Mono<ServerResponse> range(ServerRequest request) {
        byte[][] bounds = EntityRequests.range(request);
        DataBufferFactory buffers = request.exchange().getResponse().bufferFactory();
        Flux<DataBuffer> chunks = coordinator.range(bounds[0], bounds[1])
                .concatMap(record -> ConnectionHooks.whenWritable(request).then(Mono.fromSupplier(() -> chunk(buffers, record))), 1);
        return ServerResponse.ok().contentType(MediaType.APPLICATION_OCTET_STREAM).body(BodyInserters.fromDataBuffers(chunks));
    }

    private static DataBuffer chunk(DataBufferFactory buffers, KeyedRecord keyed) {
        byte[] key = keyed.key();
        Record record = keyed.record();
        return buffers.allocateBuffer(key.length + 1 + record.valueLength())
                .write(key)
                .write((byte) '\n')
                .write(record.valueBuffer());
    }

    private static byte[] drain(DataBuffer buffer) {
        try {
            byte[] bytes = new byte[buffer.readableByteCount()];
            buffer.read(bytes);
            return bytes;
        } finally {
            DataBufferUtils.release(buffer);
        }
    }

    private BadRequestException tooLarge() {
        return new BadRequestException(HttpStatus.CONTENT_TOO_LARGE,
                "the value is larger than ringkv.max-value-size (" + settings.maxValueBytes() + " bytes)");
    }
}
