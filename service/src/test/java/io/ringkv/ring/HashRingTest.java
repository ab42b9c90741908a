package io.ringkv.ring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

class HashRingTest {

    private static final List<String> THREE = List.of("http://node-a:8080", "http://node-b:8080", "http://node-c:8080");

    @Test
    void spreadsAMillionRandomKeysEvenlyOverThreeNodes() {
        HashRing ring = new HashRing(Member.named(THREE), HashRing.DEFAULT_VNODES);
        Map<String, Integer> owned = new HashMap<>();
        SplittableRandom random = new SplittableRandom(42);
        int keys = 1_000_000;
        for (int i = 0; i < keys; i++) {
            byte[] key = ("key-" + random.nextLong()).getBytes();
            owned.merge(ring.replicasFor(key, 1).get(0), 1, Integer::sum);
        }
        double average = keys / 3.0;
        double worst = owned.values().stream().mapToInt(Integer::intValue).max().orElseThrow() / average;
        System.out.printf("ring balance, %d keys on 3 nodes x %d vnodes: %s; max/avg = %.3f%n",
                keys, HashRing.DEFAULT_VNODES, owned, worst);
        assertThat(owned).hasSize(3);
        assertThat(worst).isLessThanOrEqualTo(1.15);
    }

    @Test
    void replicasForASmallerCountArePrefixOfALargerOne() {
        HashRing ring = new HashRing(Member.named(THREE), HashRing.DEFAULT_VNODES);
        for (int i = 0; i < 1000; i++) {
            byte[] key = ByteBuffer.allocate(4).putInt(i).array();
            List<String> all = ring.replicasFor(key, 3);
            assertThat(all).doesNotHaveDuplicates().containsExactlyInAnyOrderElementsOf(THREE);
            assertThat(ring.replicasFor(key, 2)).isEqualTo(all.subList(0, 2));
            assertThat(ring.replicasFor(key, 1)).isEqualTo(all.subList(0, 1));
        }
    }

    @Test
    void placementDependsOnNamesOnlyNotOnTheirOrder() {
        HashRing ring = new HashRing(Member.named(THREE), HashRing.DEFAULT_VNODES);
        HashRing shuffled = new HashRing(Member.named(List.of(THREE.get(2), THREE.get(0), THREE.get(1))), HashRing.DEFAULT_VNODES);
        for (int i = 0; i < 1000; i++) {
            byte[] key = ("k" + i).getBytes();
            assertThat(shuffled.replicasFor(key, 3)).isEqualTo(ring.replicasFor(key, 3));
        }
    }

    @Test
    void addingANodeMovesOnlyKeysToTheNewNode() {
        HashRing before = new HashRing(Member.named(THREE), HashRing.DEFAULT_VNODES);
        HashRing after = new HashRing(Member.named(List.of(THREE.get(0), THREE.get(1), THREE.get(2), "http://node-d:8080")), HashRing.DEFAULT_VNODES);
        int moved = 0;
        int keys = 100_000;
        for (int i = 0; i < keys; i++) {
            byte[] key = ("k" + i).getBytes();
            String owner = before.replicasFor(key, 1).get(0);
            String newOwner = after.replicasFor(key, 1).get(0);
            if (!owner.equals(newOwner)) {
                assertThat(newOwner).isEqualTo("http://node-d:8080");
                moved++;
            }
        }
        System.out.printf("adding a 4th node moved %.1f%% of the keys (ideal 25%%)%n", 100.0 * moved / keys);
        assertThat(moved).isBetween(keys / 5, keys * 3 / 10);
    }

    @Test
    void rejectsCountsOutsideTheRing() {
        HashRing ring = new HashRing(Member.named(THREE), HashRing.DEFAULT_VNODES);
        assertThatThrownBy(() -> ring.replicasFor(new byte[] {1}, 4)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ring.replicasFor(new byte[] {1}, 0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new HashRing(Member.named(List.of()), HashRing.DEFAULT_VNODES)).isInstanceOf(IllegalArgumentException.class);
    }
}
