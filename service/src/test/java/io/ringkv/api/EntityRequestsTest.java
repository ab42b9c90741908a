package io.ringkv.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.springframework.mock.web.reactive.function.server.MockServerRequest;
import org.springframework.web.reactive.function.server.ServerRequest;

import io.ringkv.overload.OverloadedException;
import io.ringkv.replication.Placement;
import io.ringkv.replication.ReplicationFactor;
import io.ringkv.ring.HashRing;
import io.ringkv.ring.Member;

class EntityRequestsTest {

    private static final HashRing TWO = new HashRing(Member.named(List.of("a", "b")), 8);
    private static final HashRing THREE = new HashRing(Member.named(List.of("a", "b", "c")), 8);

    private static ServerRequest request(String query) {
        return MockServerRequest.builder().uri(URI.create("http://node/v0/entity?" + query)).build();
    }

    /**
     * Right after a fresh install, or while a node joins or is rebuilt in a small cluster, fewer
     * members hold data than there are: a {@code from} that counts the joining member is served by
     * the owners (a {@code 2/3} while one of three pulls its ranges), an {@code ack} only the
     * joining member will make possible is a 503 to retry, and a {@code from} beyond every member
     * is the client's mistake, a 400.
     */
    @Test
    void aFromOnlyAJoiningMemberMakesPossibleIsServedByTheOwners() {
        Placement joining = new Placement(TWO, THREE, List.of(THREE), name -> null);
        assertThat(EntityRequests.replicas(request("id=k&replicas=2/2"), joining, 3).from()).isEqualTo(2);
        ReplicationFactor twoOfThree = EntityRequests.replicas(request("id=k&replicas=2/3"), joining, 3);
        assertThat(twoOfThree).isEqualTo(new ReplicationFactor(2, 3));
        assertThat(joining.served(twoOfThree)).as("the two owners count; the write still reaches the third")
                .isEqualTo(new ReplicationFactor(2, 2));
        assertThat(EntityRequests.replicas(request("id=k"), joining, 3)).isEqualTo(new ReplicationFactor(2, 2));
        assertThatThrownBy(() -> EntityRequests.replicas(request("id=k&replicas=3/3"), joining, 3))
                .isInstanceOf(OverloadedException.class)
                .hasMessageContaining("ack=3")
                .hasMessageContaining("retry shortly");
        assertThatThrownBy(() -> EntityRequests.replicas(request("id=k&replicas=4/4"), joining, 3))
                .isInstanceOf(BadRequestException.class);

        Placement settled = new Placement(TWO, TWO, List.of(), name -> null);
        assertThatThrownBy(() -> EntityRequests.replicas(request("id=k&replicas=3/3"), settled, 3))
                .isInstanceOf(BadRequestException.class)
                .hasMessageContaining("from=3");
    }
}
