package io.ringkv.handover;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.stream.IntStream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.ringkv.record.Record;
import io.ringkv.ring.ClusterMembership;
import io.ringkv.ring.Member;
import io.ringkv.ring.MemberState;
import io.ringkv.storage.RocksStore;
import io.ringkv.support.TestStores;
import reactor.core.scheduler.Schedulers;

/** A cleanup drops data only on a settled ring: dropping by a ring that is about to change could drop the only copy. */
class CleanupRefusalTest {

    @TempDir
    Path dir;

    @Test
    void notOnARingDiscoveryHasNotFilledInYet() {
        try (RocksStore store = TestStores.open(dir)) {
            Cleanup cleanup = new Cleanup(store, Schedulers.immediate(), ClusterMembership.discovered(Member.named("http://a"), 16), 3, null, peer -> null);
            assertThatThrownBy(cleanup::start).isInstanceOf(IllegalStateException.class).hasMessageContaining("known ring");
        }
    }

    @Test
    void notWhileMembersJoinOrLeave() {
        try (RocksStore store = TestStores.open(dir)) {
            ClusterMembership membership = ClusterMembership.fixed(Member.named("http://a"), Member.named(List.of("http://a", "http://b", "http://c")), 16);
            Cleanup cleanup = new Cleanup(store, Schedulers.immediate(), membership, 1, null, peer -> null);
            membership.update(Member.named(Set.of("http://a", "http://b", "http://c", "http://d")));
            membership.setState("http://d", MemberState.JOINING);
            assertThatThrownBy(cleanup::start).isInstanceOf(IllegalStateException.class).hasMessageContaining("data is moving");
            membership.setState("http://d", MemberState.NORMAL);
            membership.setState("http://b", MemberState.LEAVING);
            assertThatThrownBy(cleanup::start).isInstanceOf(IllegalStateException.class).hasMessageContaining("data is moving");
        }
    }

    /** A copy is dropped only once its owner holds it: an owner out of reach leaves every copy in place. */
    @Test
    void dropsNothingWhileAnOwnerIsOutOfReach() {
        try (RocksStore store = TestStores.open(dir)) {
            ClusterMembership membership = ClusterMembership.fixed(Member.named("http://a"), Member.named(List.of("http://a", "http://b", "http://c")), 16);
            byte[] notOwned = IntStream.range(0, 100).mapToObj(i -> ("k" + i).getBytes(StandardCharsets.UTF_8))
                    .filter(key -> !membership.ring().replicasFor(key, 1).contains("http://a"))
                    .findFirst().orElseThrow();
            store.apply(notOwned, Record.value(1, new byte[] {1})).join();
            Cleanup cleanup = new Cleanup(store, Schedulers.immediate(), membership, 1, null, peer -> null);

            cleanup.start();

            assertThat(cleanup.status().state()).isEqualTo("failed");
            assertThat(cleanup.status().reason()).contains("not reachable");
            assertThat(cleanup.status().keysDropped()).isZero();
            assertThat(store.get(notOwned)).isPresent();
        }
    }
}
