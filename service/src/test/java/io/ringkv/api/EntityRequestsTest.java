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
import io.ringkv.ring.HashRing;

class EntityRequestsTest {

    private static final HashRing TWO = new HashRing(List.of("a", "b"), 8);
    private static final HashRing THREE = new HashRing(List.of("a", "b", "c"), 8);

    private static ServerRequest request(String query) {
        return MockServerRequest.builder().uri(URI.create("http://node/v0/entity?" + query)).build();
    }

    /**
     * Right after a fresh install, or while a node joins a small cluster, fewer members hold data
     * than there are: a {@code from} the joining member will make possible is a 503 to retry, and
     * one beyond every member is the client's mistake, a 400.
     */
    @Test
    void aFromOnlyAJoiningMemberMakesPossibleIsRetriedNotRefused() {
        Placement joining = new Placement(TWO, THREE, List.of(THREE), name -> null);
        assertThat(EntityRequests.replicas(request("id=k&replicas=2/2"), joining, 3).from()).isEqualTo(2);
        assertThatThrownBy(() -> EntityRequests.replicas(request("id=k&replicas=3/3"), joining, 3))
                .isInstanceOf(OverloadedException.class)
                .hasMessageContaining("from=3")
                .hasMessageContaining("retry shortly");
        assertThatThrownBy(() -> EntityRequests.replicas(request("id=k&replicas=4/4"), joining, 3))
                .isInstanceOf(BadRequestException.class);

        Placement settled = new Placement(TWO, TWO, List.of(), name -> null);
        assertThatThrownBy(() -> EntityRequests.replicas(request("id=k&replicas=3/3"), settled, 3))
                .isInstanceOf(BadRequestException.class)
                .hasMessageContaining("from=3");
    }
}
