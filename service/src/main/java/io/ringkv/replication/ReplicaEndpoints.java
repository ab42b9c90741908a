package io.ringkv.replication;

import java.nio.charset.StandardCharsets;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import io.ringkv.storage.RecordCodec;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The replica side of the internal protocol ({@link InternalApi}): a thin shell over this node's
 * {@link LocalReplica}. Writes carry the coordinator's timestamp; this node's clock observes it
 * so that its own later writes order after it.
 */
@RestController
public class ReplicaEndpoints {

    private final LocalReplica local;
    private final HybridClock clock;

    public ReplicaEndpoints(LocalReplica local, HybridClock clock) {
        this.local = local;
        this.clock = clock;
    }

    @GetMapping(path = InternalApi.IDENTITY, produces = MediaType.TEXT_PLAIN_VALUE)
    public String identity() {
        return local.name();
    }

    @GetMapping(path = InternalApi.RECORD, produces = MediaType.APPLICATION_OCTET_STREAM_VALUE)
    public Mono<ResponseEntity<byte[]>> read(@RequestParam("id") String id) {
        return local.read(bytes(id))
                .map(found -> found
                        .map(record -> ResponseEntity.ok(RecordCodec.encode(record)))
                        .orElseGet(() -> ResponseEntity.notFound().build()));
    }

    @PutMapping(path = InternalApi.RECORD, consumes = MediaType.APPLICATION_OCTET_STREAM_VALUE)
    public Mono<ResponseEntity<Void>> write(@RequestParam("id") String id, @RequestBody byte[] body) {
        var record = RecordCodec.decode(body);
        clock.observe(record.timestamp());
        return local.write(bytes(id), record).thenReturn(ResponseEntity.status(HttpStatus.NO_CONTENT).build());
    }

    @GetMapping(path = InternalApi.RECORDS, produces = MediaType.APPLICATION_OCTET_STREAM_VALUE)
    public Flux<DataBuffer> scan(@RequestParam("start") String start, @RequestParam(name = "end", required = false) String end) {
        return local.scan(bytes(start), end == null ? null : bytes(end))
                .map(keyed -> DefaultDataBufferFactory.sharedInstance.wrap(RecordFrames.encode(keyed)));
    }

    private static byte[] bytes(String key) {
        return key.getBytes(StandardCharsets.UTF_8);
    }
}
