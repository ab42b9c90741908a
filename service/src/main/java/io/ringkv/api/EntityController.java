package io.ringkv.api;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferFactory;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

import io.ringkv.config.RingkvProperties;
import io.ringkv.replication.Coordinator;
import io.ringkv.storage.KeyedRecord;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The public API. Every node serves every request and coordinates it; this class only parses and
 * checks the request and maps the {@link Coordinator}'s answer to HTTP.
 */
@RestController
@RequestMapping("/v0")
public class EntityController {

    private final Coordinator coordinator;
    private final long maxValueBytes;

    public EntityController(Coordinator coordinator, RingkvProperties properties) {
        this.coordinator = coordinator;
        this.maxValueBytes = properties.maxValueSize().toBytes();
    }

    @GetMapping("/status")
    public String status() {
        return "OK";
    }

    @GetMapping(path = "/entity", produces = MediaType.APPLICATION_OCTET_STREAM_VALUE)
    public Mono<ResponseEntity<byte[]>> get(ServerHttpRequest request) {
        byte[] key = EntityRequests.key(request);
        var factor = EntityRequests.replicas(request, coordinator.clusterSize());
        return coordinator.get(key, factor)
                .map(value -> value
                        .map(ResponseEntity::ok)
                        .orElseGet(() -> ResponseEntity.notFound().build()));
    }

    @PutMapping("/entity")
    public Mono<ResponseEntity<Void>> put(ServerHttpRequest request) {
        byte[] key = EntityRequests.key(request);
        var factor = EntityRequests.replicas(request, coordinator.clusterSize());
        long declaredLength = request.getHeaders().getContentLength();
        if (declaredLength > maxValueBytes) {
            throw tooLarge();
        }
        return DataBufferUtils.join(request.getBody(), (int) maxValueBytes)
                .onErrorMap(DataBufferLimitException.class, error -> tooLarge())
                .map(EntityController::drain)
                .defaultIfEmpty(new byte[0])
                .flatMap(value -> coordinator.put(key, value, factor))
                .thenReturn(ResponseEntity.status(HttpStatus.CREATED).build());
    }

    @DeleteMapping("/entity")
    public Mono<ResponseEntity<Void>> delete(ServerHttpRequest request) {
        byte[] key = EntityRequests.key(request);
        var factor = EntityRequests.replicas(request, coordinator.clusterSize());
        return coordinator.delete(key, factor)
                .thenReturn(ResponseEntity.status(HttpStatus.ACCEPTED).build());
    }

    /**
     * Streams the range with one HTTP chunk per record, {@code key\nvalue}; backpressure reaches the
     * replicas' iterators, so a slow client slows the scan instead of filling the heap.
     */
    @GetMapping(path = "/entities", produces = MediaType.APPLICATION_OCTET_STREAM_VALUE)
    public ResponseEntity<Flux<DataBuffer>> range(ServerHttpRequest request, ServerHttpResponse response) {
        byte[][] bounds = EntityRequests.range(request);
        DataBufferFactory buffers = response.bufferFactory();
        Flux<DataBuffer> chunks = coordinator.range(bounds[0], bounds[1])
                .map(record -> chunk(buffers, record));
        return ResponseEntity.ok().contentType(MediaType.APPLICATION_OCTET_STREAM).body(chunks);
    }

    private static DataBuffer chunk(DataBufferFactory buffers, KeyedRecord keyed) {
        byte[] key = keyed.key();
        byte[] value = keyed.record().value();
        return buffers.allocateBuffer(key.length + 1 + value.length)
                .write(key)
                .write((byte) '\n')
                .write(value);
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
                "the value is larger than ringkv.max-value-size (" + maxValueBytes + " bytes)");
    }
}
