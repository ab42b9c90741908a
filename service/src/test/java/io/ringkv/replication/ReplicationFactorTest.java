package io.ringkv.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class ReplicationFactorTest {

    @ParameterizedTest
    @CsvSource({"1,1,1", "2,2,2", "3,2,3", "4,2,3", "5,2,3"})
    void defaultsToAMajorityOfTheReplicationFactorOrOfAllNodesIfFewer(int clusterSize, int ack, int from) {
        assertThat(ReplicationFactor.parse(null, clusterSize, 3)).isEqualTo(new ReplicationFactor(ack, from));
        assertThat(ReplicationFactor.parse("", clusterSize, 3)).isEqualTo(new ReplicationFactor(ack, from));
    }

    @ParameterizedTest
    @CsvSource({"5,3,5", "7,3,5"})
    void aLargerFactorGivesALargerDefault(int clusterSize, int ack, int from) {
        assertThat(ReplicationFactor.parse(null, clusterSize, 5)).isEqualTo(new ReplicationFactor(ack, from));
    }

    @ParameterizedTest
    @CsvSource({"1/1,1,1", "2/3,2,3", "3/3,3,3", "1/2,1,2"})
    void parsesAckSlashFrom(String text, int ack, int from) {
        assertThat(ReplicationFactor.parse(text, 3, 3)).isEqualTo(new ReplicationFactor(ack, from));
    }

    @ParameterizedTest
    @ValueSource(strings = {"0/3", "4/3", "2/4", "a/3", "2", "2/", "/3", "2/3/3", "-1/3", "2/-3", " 2/3", "99999999999/3", "2.0/3",
            "\u0662/\u0663", "2/\uff13", "\u0967/3"}) // Arabic-Indic, full-width and Devanagari digits
    void rejectsAnythingElse(String text) {
        assertThatThrownBy(() -> ReplicationFactor.parse(text, 3, 3))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("replicas");
    }
}
