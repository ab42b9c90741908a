package io.ringkv.security;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.http.HttpHeaders;

import io.ringkv.support.TestCluster;

/**
 * Nodes that require client tokens still find and call each other: a peer asks another node's
 * public port who it is and where it answers peers without a token, and a write that needs both
 * replicas gets both.
 */
class SecuredClusterTest {

    private static final String WRITER = "write-0123456789abcdef";

    @TempDir
    Path dir;

    @Test
    void nodesWithTokensRequiredStillReplicateToEachOther() throws IOException {
        Path tokens = Files.writeString(dir.resolve("tokens"), WRITER + " write app\n");
        try (TestCluster cluster = TestCluster.start(2, dir.resolve("data"),
                Map.of("ringkv.security.enabled", true, "ringkv.security.tokens-file", tokens))) {
            cluster.client(0).put().uri("/v0/entity?id=k&replicas=2/2").bodyValue("v".getBytes())
                    .exchange().expectStatus().isUnauthorized();
            cluster.client(0).put().uri("/v0/entity?id=k&replicas=2/2").header(HttpHeaders.AUTHORIZATION, "Bearer " + WRITER)
                    .bodyValue("v".getBytes()).exchange().expectStatus().isCreated();
            cluster.client(1).get().uri("/v0/entity?id=k&replicas=2/2").header(HttpHeaders.AUTHORIZATION, "Bearer " + WRITER)
                    .exchange().expectStatus().isOk().expectBody(String.class).isEqualTo("v");
        }
    }
}
