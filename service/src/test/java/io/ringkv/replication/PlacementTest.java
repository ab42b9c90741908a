package io.ringkv.replication;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;

import org.junit.jupiter.api.Test;

import io.ringkv.record.KeyedRecord;
import io.ringkv.record.Record;
import io.ringkv.ring.HashRing;
import io.ringkv.ring.Member;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

class PlacementTest {

    private static final HashRing THREE = new HashRing(Member.named(List.of("a", "b", "c")), HashRing.DEFAULT_VNODES);
    private static final HashRing FOUR = new HashRing(Member.named(List.of("a", "b", "c", "d")), HashRing.DEFAULT_VNODES);

    private static List<String> names(List<Replica> replicas) {
        return replicas.stream().map(Replica::name).toList();
    }

    private static Placement placement(HashRing current, HashRing future) {
        return new Placement(current, future, current == future ? List.of() : List.of(future), name -> new NamedReplica(name));
    }

    @Test
    void aSteadyRingWritesWhereItReads() {
        Placement steady = placement(THREE, THREE);
        byte[] key = "k".getBytes(StandardCharsets.UTF_8);
        assertThat(names(steady.writeReplicas(key, 2))).isEqualTo(names(steady.readReplicas(key, 2)))
                .isEqualTo(THREE.replicasFor(key, 2));
        assertThat(steady.size()).isEqualTo(3);
    }

    /**
     * One of three members rebuilt from empty (a wiped volume) is JOINING while it pulls: a
     * {@code 2/3} is served by the two owners, both asked and both counted, and every write also
     * reaches the third, so that nothing written during its pull is missing once it serves.
     */
    @Test
    void whileOneOfThreeIsRebuiltTwoOfThreeIsServedByTheOwnersAndWritesReachAllThree() {
        HashRing owners = new HashRing(Member.named(List.of("a", "b")), HashRing.DEFAULT_VNODES);
        Placement rebuilding = placement(owners, THREE);
        ReplicationFactor twoOfThree = new ReplicationFactor(2, 3);
        assertThat(rebuilding.served(twoOfThree)).isEqualTo(new ReplicationFactor(2, 2));
        assertThat(placement(THREE, THREE).served(twoOfThree)).isEqualTo(twoOfThree);
        for (int i = 0; i < 50; i++) {
            byte[] key = ("k" + i).getBytes(StandardCharsets.UTF_8);
            assertThat(names(rebuilding.readReplicas(key, 3))).containsExactlyInAnyOrder("a", "b");
            List<String> writes = names(rebuilding.writeReplicas(key, 3));
            assertThat(writes.subList(0, 2)).as("the owners first: they count towards ack").containsExactlyInAnyOrder("a", "b");
            assertThat(writes).containsExactlyInAnyOrder("a", "b", "c");
        }
    }

    @Test
    void whileAMemberJoinsWritesAlsoGoToItsNewKeys() {
        Placement joining = placement(THREE, FOUR);
        int movedTo = 0;
        for (int i = 0; i < 200; i++) {
            byte[] key = ("k" + i).getBytes(StandardCharsets.UTF_8);
            List<String> writes = names(joining.writeReplicas(key, 2));
            assertThat(writes.subList(0, 2)).as("the current owners first").isEqualTo(THREE.replicasFor(key, 2));
            assertThat(writes).containsAll(FOUR.replicasFor(key, 2));
            assertThat(names(joining.readReplicas(key, 2))).doesNotContain("d");
            movedTo += writes.contains("d") ? 1 : 0;
        }
        assertThat(movedTo).as("d takes about half of the keys at 2 of 4").isBetween(60, 140);
    }

    @Test
    void whileTwoMembersJoinWritesReachEachForWhatItOwnsAsTheOnlyNewcomer() {
        // d and e join together; d may finish first, and reads then use a, b, c, d.
        HashRing five = new HashRing(Member.named(List.of("a", "b", "c", "d", "e")), HashRing.DEFAULT_VNODES);
        HashRing withD = FOUR;
        HashRing withE = new HashRing(Member.named(List.of("a", "b", "c", "e")), HashRing.DEFAULT_VNODES);
        Placement joining = new Placement(THREE, five, List.of(withD, withE), name -> new NamedReplica(name));
        for (int i = 0; i < 300; i++) {
            byte[] key = ("k" + i).getBytes(StandardCharsets.UTF_8);
            List<String> writes = names(joining.writeReplicas(key, 3));
            assertThat(writes).containsAll(THREE.replicasFor(key, 3)).containsAll(five.replicasFor(key, 3))
                    .containsAll(withD.replicasFor(key, 3)).containsAll(withE.replicasFor(key, 3));
            assertThat(writes).doesNotHaveDuplicates();
        }
    }

    /** A stand-in replica that only has a name: placement never calls one. */
    private record NamedReplica(String name) implements Replica {
        @Override
        public ReplicaWindow window() {
            throw new UnsupportedOperationException();
        }

        @Override
        public double expectedLatencyMillis() {
            throw new UnsupportedOperationException();
        }

        @Override
        public Mono<Optional<Record>> read(byte[] key) {
            throw new UnsupportedOperationException();
        }

        @Override
        public Mono<Boolean> write(byte[] key, Record record) {
            throw new UnsupportedOperationException();
        }

        @Override
        public Mono<Void> writeBatch(List<KeyedRecord> records) {
            throw new UnsupportedOperationException();
        }

        @Override
        public Flux<KeyedRecord> scan(byte[] start, byte[] end) {
            throw new UnsupportedOperationException();
        }
    }
}
