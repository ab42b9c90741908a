package io.ringkv.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class ReplicationFactorTest {

    @ParameterizedTest
    @CsvSource({"1,1,1", "2,2,2", "3,2,3", "4,3,4", "5,3,5"})
    void defaultsToAMajorityOfAllNodes(int clusterSize, int ack, int from) {
        assertThat(ReplicationFactor.parse(null, clusterSize)).isEqualTo(new ReplicationFactor(ack, from));
        assertThat(ReplicationFactor.parse("", clusterSize)).isEqualTo(new ReplicationFactor(ack, from));
    }

    @ParameterizedTest
    @CsvSource({"1/1,1,1", "2/3,2,3", "3/3,3,3", "1/2,1,2"})
    void parsesAckSlashFrom(String text, int ack, int from) {
        assertThat(ReplicationFactor.parse(text, 3)).isEqualTo(new ReplicationFactor(ack, from));
    }

    @ParameterizedTest
    @ValueSource(strings = {"0/3", "4/3", "2/4", "a/3", "2", "2/", "/3", "2/3/3", "-1/3", "2/-3", " 2/3", "99999999999/3", "2.0/3"})
    void rejectsAnythingElse(String text) {
        assertThatThrownBy(() -> ReplicationFactor.parse(text, 3))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("replicas");
    }
}
