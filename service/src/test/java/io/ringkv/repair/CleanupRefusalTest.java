package io.ringkv.repair;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.ringkv.ring.ClusterMembership;
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
            Cleanup cleanup = new Cleanup(store, Schedulers.immediate(), ClusterMembership.discovered("http://a", 16), 3);
            assertThatThrownBy(cleanup::start).isInstanceOf(IllegalStateException.class).hasMessageContaining("known ring");
        }
    }

    @Test
    void notWhileMembersJoinOrLeave() {
        try (RocksStore store = TestStores.open(dir)) {
            ClusterMembership membership = ClusterMembership.fixed("http://a", List.of("http://a", "http://b", "http://c"), 16);
            Cleanup cleanup = new Cleanup(store, Schedulers.immediate(), membership, 1);
            membership.update(Set.of("http://a", "http://b", "http://c", "http://d"));
            membership.setState("http://d", MemberState.JOINING);
            assertThatThrownBy(cleanup::start).isInstanceOf(IllegalStateException.class).hasMessageContaining("data is moving");
            membership.setState("http://d", MemberState.NORMAL);
            membership.setState("http://b", MemberState.LEAVING);
            assertThatThrownBy(cleanup::start).isInstanceOf(IllegalStateException.class).hasMessageContaining("data is moving");
        }
    }
}
