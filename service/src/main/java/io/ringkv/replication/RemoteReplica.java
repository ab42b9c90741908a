package io.ringkv.replication;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.util.UriBuilder;

import io.ringkv.health.PeerMonitor;
import io.ringkv.storage.KeyedRecord;
import io.ringkv.storage.Record;
import io.ringkv.storage.RecordCodec;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;

/**
 * A peer's store, reached over the internal HTTP protocol through a connection pool of its own, so
 * that a slow peer exhausts only its own connections. Keep-alive connections are reused across
 * requests; the pool is released by {@link #close()}.
 */
public final class RemoteReplica implements Replica, AutoCloseable {

    private final String name;
    private final PeerMonitor monitor;
    private final Duration timeout;
    private final ConnectionProvider connections;
    private final WebClient client;
    private final int maxKeyLength;
    private final int maxRecordLength;

    public RemoteReplica(String name, PeerClientSettings settings, PeerMonitor monitor) {
        this.name = name;
        this.monitor = monitor;
        this.timeout = settings.timeout();
        this.maxKeyLength = settings.maxKeyLength();
        this.maxRecordLength = settings.maxValueLength() + RecordCodec.HEADER_SIZE;
        this.connections = ConnectionProvider.builder("peer-" + name)
                .maxConnections(settings.maxConnections())
                // A request that finds every connection busy waits for one no longer than a replica call may take.
                .pendingAcquireTimeout(settings.timeout())
                // Idle connections are closed before a peer or a proxy in between drops them silently.
                .maxIdleTime(Duration.ofSeconds(30))
                .build();
        HttpClient http = HttpClient.create(connections)
                .resolver(dns -> dns.cacheMaxTimeToLive(settings.dnsCacheMaxTtl()).cacheNegativeTimeToLive(Duration.ZERO))
                .responseTimeout(settings.timeout());
        WebClient.Builder builder = WebClient.builder()
                .baseUrl(name)
                .clientConnector(new ReactorClientHttpConnector(http))
                .codecs(codecs -> codecs.defaultCodecs().maxInMemorySize(maxRecordLength));
        if (settings.secret() != null) {
            builder.defaultHeader(InternalApi.SECRET_HEADER, settings.secret());
        }
        this.client = builder.build();
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public double expectedLatencyMillis() {
        return monitor.expectedLatencyMillis();
    }

    @Override
    public Mono<Optional<Record>> read(byte[] key) {
        return guarded("read", client.get()
                .uri(uri -> withKey(uri.path(InternalApi.RECORD), key))
                .exchangeToMono(response -> {
                    if (response.statusCode().value() == HttpStatus.NOT_FOUND.value()) {
                        return response.releaseBody().thenReturn(Optional.<Record>empty());
                    }
                    if (!response.statusCode().is2xxSuccessful()) {
                        return response.createError();
                    }
                    return response.bodyToMono(byte[].class)
                            .defaultIfEmpty(new byte[0])
                            .map(bytes -> Optional.of(RecordCodec.decode(bytes)));
                }));
    }

    @Override
    public Mono<Boolean> write(byte[] key, Record record) {
        return guarded("write", client.put()
                .uri(uri -> withKey(uri.path(InternalApi.RECORD), key))
                .contentType(MediaType.APPLICATION_OCTET_STREAM)
                .bodyValue(RecordCodec.encode(record))
                .retrieve()
                .toBodilessEntity()
                .thenReturn(true));
    }

    /** Whether the peer answers by its name, through its breaker: discovery's probe between requests. */
    public Mono<Boolean> probe() {
        return guarded("probe", client.get().uri(InternalApi.IDENTITY).retrieve().bodyToMono(String.class))
                .map(name -> true)
                .onErrorReturn(false);
    }

    /** The timeout goes inside the breaker's guard, so that the breaker counts a peer that does not answer in time. */
    private <T> Mono<T> guarded(String operation, Mono<T> call) {
        return monitor.guard(operation, call.timeout(timeout));
    }

    @Override
    public Flux<KeyedRecord> scan(byte[] start, byte[] end) {
        return monitor.guardStream(Flux.defer(() -> {
            RecordFrames.Decoder decoder = new RecordFrames.Decoder(maxKeyLength, maxRecordLength);
            return client.get()
                    .uri(uri -> {
                        uri.path(InternalApi.RECORDS).queryParam("start", "{start}");
                        return end == null
                                ? uri.build(text(start))
                                : uri.queryParam("end", "{end}").build(text(start), text(end));
                    })
                    .retrieve()
                    .bodyToFlux(DataBuffer.class)
                    // A small prefetch: network buffers wait in the socket, not on the heap.
                    .concatMapIterable(buffer -> feed(decoder, buffer), 2)
                    .doOnDiscard(DataBuffer.class, DataBufferUtils::release)
                    .concatWith(Mono.defer(() -> decoder.isAtFrameBoundary()
                            ? Mono.empty()
                            : Mono.error(new IllegalStateException("the range stream from " + name + " ended inside a record"))));
        }));
    }

    private static List<KeyedRecord> feed(RecordFrames.Decoder decoder, DataBuffer buffer) {
        try {
            byte[] piece = new byte[buffer.readableByteCount()];
            buffer.read(piece);
            return decoder.feed(piece);
        } finally {
            DataBufferUtils.release(buffer);
        }
    }

    private static URI withKey(UriBuilder uri, byte[] key) {
        return uri.queryParam("id", "{id}").build(text(key));
    }

    private static String text(byte[] key) {
        return new String(key, StandardCharsets.UTF_8);
    }

    @Override
    public void close() {
        connections.dispose();
    }

    @Override
    public String toString() {
        return "RemoteReplica[" + name + "]";
    }
}
