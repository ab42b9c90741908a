package io.ringkv.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.ringkv.overload.AdmissionControl;
import io.ringkv.overload.OverloadedException;
import io.ringkv.record.HybridClock;
import io.ringkv.record.KeyedRecord;
import io.ringkv.record.Record;
import io.ringkv.ring.HashRing;
import io.ringkv.ring.Member;
import io.ringkv.storage.RocksStore;
import io.ringkv.support.TestStores;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * Reads that this node's own replica decides alone (ack 1, the local replica asked first): the
 * same answers as a round of calls would give, the peer not asked, and the clock's and the
 * memory bound's refusals kept.
 */
class CoordinatorReadTest {

    private static final long NOW_MILLIS = 1_000_000;
    private static final byte[] KEY = TestStores.bytes("k");

    @TempDir
    Path dir;

    private RocksStore store;
    private HybridClock clock;
    private Peer peer;
    private Coordinator coordinator;
    private Placement placement;

    @BeforeEach
    void setUp() {
        store = TestStores.open(dir);
        clock = new HybridClock(() -> NOW_MILLIS, 500);
        LocalReplica local = new LocalReplica("self", store, Schedulers.boundedElastic(), new ReplicaWindow(16, 1 << 20));
        peer = new Peer(Record.value(HybridClock.timestampAt(NOW_MILLIS - 10), TestStores.bytes("peer's")));
        HashRing ring = new HashRing(Member.named(List.of("self", "peer")), 8);
        placement = new Placement(ring, ring, List.of(), name -> name.equals("self") ? local : peer);
        coordinator = new Coordinator(null, clock, Duration.ofSeconds(2), Duration.ofSeconds(1), 2, HintedHandoff.NONE,
                new SimpleMeterRegistry());
    }

    @AfterEach
    void close() {
        store.close();
    }

    private Optional<byte[]> read(AdmissionControl.Held hold) {
        return coordinator.get(KEY, new ReplicationFactor(1, 2), placement, hold).block(Duration.ofSeconds(5))
                .map(Record::value);
    }

    private static AdmissionControl.Held roomy() {
        return new AdmissionControl(10, 1 << 20, new SimpleMeterRegistry()).held();
    }

    @Test
    void aValueInThisNodesMemoryIsTheAnswerAndThePeerIsNotAsked() {
        store.apply(KEY, Record.value(HybridClock.timestampAt(NOW_MILLIS - 5), TestStores.bytes("mine"))).join();

        assertThat(read(roomy())).hasValueSatisfying(value -> assertThat(new String(value)).isEqualTo("mine"));
        assertThat(peer.reads).hasValue(0);
    }

    @Test
    void aTombstoneInThisNodesMemoryAnswersNotFound() {
        store.apply(KEY, Record.tombstone(HybridClock.timestampAt(NOW_MILLIS - 5))).join();

        assertThat(read(roomy())).isEmpty();
        assertThat(peer.reads).hasValue(0);
    }

    @Test
    void aTimestampTooFarAheadIsRefusedOnceAndThePeerAnswersInstead() {
        store.apply(KEY, Record.value(HybridClock.timestampAt(NOW_MILLIS + 60_000), TestStores.bytes("from the future"))).join();

        assertThat(read(roomy())).hasValueSatisfying(value -> assertThat(new String(value)).isEqualTo("peer's"));
        assertThat(peer.reads).hasValue(1);
        assertThat(clock.refused()).as("one refusal per answer refused").isEqualTo(1);
        assertThat(clock.now()).as("the refused timestamp was not adopted")
                .isLessThan(HybridClock.timestampAt(NOW_MILLIS + 1));
    }

    @Test
    void aValueThatDoesNotFitTheBytesInFlightIsRefusedForOverload() {
        store.apply(KEY, Record.value(HybridClock.timestampAt(NOW_MILLIS - 5), new byte[4096])).join();
        AdmissionControl admission = new AdmissionControl(10, 1024, new SimpleMeterRegistry());
        assertThat(admission.held().tryAdd(1000)).as("another request's value").isTrue();
        AdmissionControl.Held tight = admission.held();

        assertThatThrownBy(() -> read(tight)).isInstanceOf(OverloadedException.class);
    }

    /** A peer that answers every read with the same record, counting the reads. */
    private static final class Peer implements Replica {
        private final Record record;
        private final AtomicInteger reads = new AtomicInteger();
        private final ReplicaWindow window = new ReplicaWindow(16, 1 << 20);

        Peer(Record record) {
            this.record = record;
        }

        @Override
        public String name() {
            return "peer";
        }

        @Override
        public ReplicaWindow window() {
            return window;
        }

        @Override
        public double expectedLatencyMillis() {
            return 1;
        }

        @Override
        public Mono<Optional<Record>> read(byte[] key) {
            return Mono.fromSupplier(() -> {
                reads.incrementAndGet();
                return Optional.of(record);
            });
        }

        @Override
        public Mono<Boolean> write(byte[] key, Record record) {
            return Mono.just(true);
        }

        @Override
        public Mono<Void> writeBatch(List<KeyedRecord> records) {
            throw new UnsupportedOperationException();
        }

        @Override
        public Flux<KeyedRecord> scan(byte[] start, byte[] end) {
            return Flux.empty();
        }
    }
}
