package io.ringkv.api;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.http.HttpHeaders;
import org.springframework.web.reactive.function.server.ServerResponse;

import io.ringkv.ring.RingNotKnownException;

/** A node that cannot place keys yet tells the client to come back, with the reason; never a 500. */
class ApiErrorsTest {

    @Test
    void aNodeThatHasNotFoundItsMembersAsksTheClientToRetry() {
        ServerResponse response = ApiErrors.answer(new RingNotKnownException()).block();

        assertThat(response).isNotNull();
        assertThat(response.statusCode().value()).isEqualTo(503);
        assertThat(response.headers().getFirst(HttpHeaders.RETRY_AFTER)).isEqualTo("1");
    }

    @Test
    void aRequestTheClusterCannotServeYetIsRetriedLaterWithTheReason() {
        ServerResponse response = ApiErrors.answer(new RetryLaterException("ttl: not every member runs a version that ...")).block();

        assertThat(response).isNotNull();
        assertThat(response.statusCode().value()).isEqualTo(503);
        assertThat(response.headers().getFirst(HttpHeaders.RETRY_AFTER)).isEqualTo("1");
    }
}
