package io.ringkv.peer.wire;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * A PING's cluster port goes after the status: a node reads the status of either version's PING
 * (an older node only that: it ignores what follows), and the port where there is one.
 */
class PingTest {

    private static final PeerStatus STATUS = new PeerStatus(1, 1234, 567);

    @Test
    void aPingTellsTheStatusAndThePort() {
        ByteBuf payload = payload(Wire.ping(ByteBufAllocator.DEFAULT, 7, STATUS, 45_678));
        assertThat(Wire.readStatus(payload)).isEqualTo(STATUS);
        assertThat(Wire.readClusterPort(payload)).isEqualTo(45_678);
        payload.release();
    }

    @Test
    void aPingOfAnOlderNodeTellsNoPort() {
        ByteBuf older = Wire.seal(Wire.writeStatus(Wire.begin(ByteBufAllocator.DEFAULT, Wire.PING, 7, PeerStatus.WIRE_BYTES), STATUS));
        ByteBuf payload = payload(older);
        assertThat(Wire.readStatus(payload)).isEqualTo(STATUS);
        assertThat(Wire.readClusterPort(payload)).isZero();
        payload.release();
    }

    /** The frame's payload: past its length, type and id. */
    private static ByteBuf payload(ByteBuf frame) {
        return frame.skipBytes(Wire.HEADER);
    }
}
