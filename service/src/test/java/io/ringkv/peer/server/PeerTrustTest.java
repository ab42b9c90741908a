package io.ringkv.peer.server;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

import io.ringkv.peer.server.PeerTrust.Decision;
import io.ringkv.peer.wire.Wire;

class PeerTrustTest {

    private static final byte[] ALL = {Wire.READ, Wire.WRITE, Wire.WRITE_BATCH, Wire.READ_BATCH, Wire.PING, Wire.SCAN,
            Wire.REPAIRED, Wire.TOKEN_SCAN, Wire.DIGEST, Wire.CREDIT, Wire.CANCEL, Wire.RECORD_SCAN, Wire.SNAPSHOT};

    @Test
    void aMemberIsServedEverything() {
        for (byte type : ALL) {
            assertThat(PeerTrust.decide(type, true)).as("type %d", type).isEqualTo(Decision.SERVE);
        }
    }

    @Test
    void aNonMemberChangesNothing() {
        assertThat(PeerTrust.decide(Wire.WRITE, false)).isEqualTo(Decision.REFUSE);
        assertThat(PeerTrust.decide(Wire.WRITE_BATCH, false)).isEqualTo(Decision.REFUSE);
        assertThat(PeerTrust.decide(Wire.REPAIRED, false)).isEqualTo(Decision.REFUSE);
        assertThat(PeerTrust.decide(Wire.SNAPSHOT, false)).as("a snapshot writes to the backup store").isEqualTo(Decision.REFUSE);
        assertThat(PeerTrust.decide(Wire.PING, false)).isEqualTo(Decision.ANSWER_ONLY);
    }

    @Test
    void aNonMemberWithTheSecretMayRead() {
        for (byte type : new byte[] {Wire.READ, Wire.READ_BATCH, Wire.SCAN, Wire.TOKEN_SCAN, Wire.DIGEST, Wire.CREDIT, Wire.CANCEL}) {
            assertThat(PeerTrust.decide(type, false)).as("type %d", type).isEqualTo(Decision.SERVE);
        }
    }
}
