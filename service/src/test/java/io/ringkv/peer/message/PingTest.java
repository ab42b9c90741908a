package io.ringkv.peer.message;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.ringkv.peer.wire.PeerStatus;
import io.ringkv.peer.wire.Wire;

/**
 * A PING's cluster port goes after the status: a node reads the status of either version's PING
 * (an older node only that: it ignores what follows), and the port where there is one.
 */
class PingTest {

    private static final PeerStatus STATUS = new PeerStatus(1, 1234, 567);

    @Test
    void aPingTellsTheStatusAndThePort() {
        ByteBuf payload = payload(Ping.frame(ByteBufAllocator.DEFAULT, 7, STATUS, 45_678));
        assertThat(Ping.readStatus(payload)).isEqualTo(STATUS);
        assertThat(Ping.readClusterPort(payload)).isEqualTo(45_678);
        payload.release();
    }

    @Test
    void aPingOfAnOlderNodeTellsNoPort() {
        ByteBuf older = Wire.seal(Ping.writeStatus(Wire.begin(ByteBufAllocator.DEFAULT, Ping.TYPE, 7, PeerStatus.WIRE_BYTES), STATUS));
        ByteBuf payload = payload(older);
        assertThat(Ping.readStatus(payload)).isEqualTo(STATUS);
        assertThat(Ping.readClusterPort(payload)).isZero();
        payload.release();
    }

    /** The frame's payload: past its length, type and id. */
    private static ByteBuf payload(ByteBuf frame) {
        return frame.skipBytes(Wire.HEADER);
    }
}
