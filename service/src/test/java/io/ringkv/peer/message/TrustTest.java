package io.ringkv.peer.message;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

import io.netty.buffer.ByteBuf;
import io.ringkv.peer.message.Trust.Decision;

/** Who may send what: each unit's rule, and a table that serves nothing it does not list. */
class TrustTest {

    private static final byte[] ALL = {Read.TYPE, Write.TYPE, WriteBatch.TYPE, ReadBatch.TYPE, Ping.TYPE, Scan.TYPE,
            Repaired.TYPE, TokenScan.TYPE, Digest.TYPE, Credit.TYPE, Cancel.TYPE, RecordScan.TYPE, Snapshot.TYPE};

    private static Decision decide(byte type, boolean member) {
        return PeerMessages.of(type).orElseThrow().trust().decide(member);
    }

    @Test
    void aMemberIsServedEverything() {
        for (byte type : ALL) {
            assertThat(decide(type, true)).as("type %d", type).isEqualTo(Decision.SERVE);
        }
    }

    @Test
    void aNonMemberChangesNothing() {
        assertThat(decide(Write.TYPE, false)).isEqualTo(Decision.REFUSE);
        assertThat(decide(WriteBatch.TYPE, false)).isEqualTo(Decision.REFUSE);
        assertThat(decide(Repaired.TYPE, false)).isEqualTo(Decision.REFUSE);
        assertThat(decide(Snapshot.TYPE, false)).as("a snapshot writes to the backup store").isEqualTo(Decision.REFUSE);
        assertThat(decide(Ping.TYPE, false)).isEqualTo(Decision.ANSWER_ONLY);
    }

    @Test
    void aNonMemberWithTheSecretMayRead() {
        for (byte type : new byte[] {Read.TYPE, ReadBatch.TYPE, Scan.TYPE, TokenScan.TYPE, Digest.TYPE, Credit.TYPE, Cancel.TYPE,
                RecordScan.TYPE}) {
            assertThat(decide(type, false)).as("type %d", type).isEqualTo(Decision.SERVE);
        }
    }

    /** Every unit of the table has a rule and a type byte of its own, and no other type byte is served. */
    @Test
    void everyMessageOfTheTableHasARuleAndNoOtherTypeIsServed() {
        assertThat(PeerMessages.ALL).allSatisfy(message -> assertThat(message.trust()).as("%s", message).isNotNull());
        int known = 0;
        for (int type = 0; type < 256; type++) {
            var message = PeerMessages.of((byte) type);
            if (message.isPresent()) {
                assertThat(message.get().type()).isEqualTo((byte) type);
                known++;
            }
        }
        assertThat(known).as("a unit per type byte, nothing else").isEqualTo(PeerMessages.ALL.size());
        for (byte type : ALL) {
            assertThat(PeerMessages.of(type)).as("type %d", type).isPresent();
        }
    }

    @Test
    void aMessageWithoutARuleCannotBeMade() {
        assertThatThrownBy(() -> new PeerMessage((byte) 0x7f, null) {
            @Override
            public void serve(Exchange exchange, int id, ByteBuf payload, Decision decision) {
            }
        }).isInstanceOf(NullPointerException.class).hasMessageContaining("names who may send it");
    }
}
