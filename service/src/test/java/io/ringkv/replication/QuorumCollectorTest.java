package io.ringkv.replication;

import static io.ringkv.replication.QuorumCollector.Outcome.FAILED;
import static io.ringkv.replication.QuorumCollector.Outcome.PENDING;
import static io.ringkv.replication.QuorumCollector.Outcome.REACHED;
import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class QuorumCollectorTest {

    @Test
    void isReachedOnTheAckthSuccessAndOnlyOnce() {
        QuorumCollector<String> quorum = new QuorumCollector<>(new ReplicationFactor(2, 3));
        assertThat(quorum.success("a")).isEqualTo(PENDING);
        assertThat(quorum.success("b")).isEqualTo(REACHED);
        assertThat(quorum.success("c")).isEqualTo(PENDING);
        assertThat(quorum.failure()).isEqualTo(PENDING);
        assertThat(quorum.answers()).containsExactly("a", "b");
    }

    @Test
    void failsAsSoonAsAckCanNoLongerBeReached() {
        QuorumCollector<String> quorum = new QuorumCollector<>(new ReplicationFactor(2, 3));
        assertThat(quorum.failure()).isEqualTo(PENDING);
        assertThat(quorum.failure()).isEqualTo(FAILED);
        assertThat(quorum.success("late")).isEqualTo(PENDING);
        assertThat(quorum.failure()).isEqualTo(PENDING);
    }

    @Test
    void allOfThemMustAnswerWhenAckEqualsFrom() {
        QuorumCollector<String> quorum = new QuorumCollector<>(new ReplicationFactor(3, 3));
        assertThat(quorum.success("a")).isEqualTo(PENDING);
        assertThat(quorum.success("b")).isEqualTo(PENDING);
        assertThat(quorum.failure()).isEqualTo(FAILED);
    }

    @Test
    void oneOfOneIsDecidedByTheOnlyAnswer() {
        assertThat(new QuorumCollector<String>(new ReplicationFactor(1, 1)).success("x")).isEqualTo(REACHED);
        assertThat(new QuorumCollector<String>(new ReplicationFactor(1, 1)).failure()).isEqualTo(FAILED);
    }

    @Test
    void anUndecidedRequestFailsOnceItsTimeIsUpAndADecidedOneStaysDecided() {
        QuorumCollector<String> late = new QuorumCollector<>(new ReplicationFactor(2, 3));
        assertThat(late.success("a")).isEqualTo(PENDING);
        assertThat(late.expire()).isEqualTo(FAILED);
        assertThat(late.expire()).isEqualTo(PENDING);
        assertThat(late.success("b")).as("an answer after the deadline").isEqualTo(PENDING);

        QuorumCollector<String> done = new QuorumCollector<>(new ReplicationFactor(1, 3));
        assertThat(done.success("a")).isEqualTo(REACHED);
        assertThat(done.expire()).isEqualTo(PENDING);
    }

    @Test
    void anAbandonedRequestEndsOnceAndKeepsNoLaterAnswer() {
        QuorumCollector<String> abandoned = new QuorumCollector<>(new ReplicationFactor(2, 3));
        assertThat(abandoned.success("a")).isEqualTo(PENDING);
        assertThat(abandoned.abandon()).as("it ends here").isTrue();
        assertThat(abandoned.abandon()).as("and only once").isFalse();
        assertThat(abandoned.success("b")).isEqualTo(PENDING);
        assertThat(abandoned.isDecided()).isTrue();
        assertThat(abandoned.reached()).as("late answers do not matter to it").isFalse();
        assertThat(abandoned.answers()).containsExactly("a");

        QuorumCollector<String> done = new QuorumCollector<>(new ReplicationFactor(1, 3));
        assertThat(done.success("a")).isEqualTo(REACHED);
        assertThat(done.abandon()).as("an answered request is not abandoned").isFalse();
        assertThat(done.reached()).isTrue();
    }
}
