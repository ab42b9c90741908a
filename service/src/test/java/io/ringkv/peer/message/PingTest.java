package io.ringkv.peer.message;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HexFormat;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.ringkv.peer.wire.PeerStatus;
import io.ringkv.peer.wire.Wire;

/**
 * A PING's cluster port goes after the status, and the caller's attributes after the port: a node
 * reads the status of either version's PING (an older node only what it knows: it ignores what
 * follows), and the port and attributes where there are some. The layouts of the previous
 * version (before attributes) are written out byte by byte, as that version writes and reads them.
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

    private static final PeerStatus ZONED = STATUS.withAttributes(Map.of("zone", "zone-b"));

    /** The previous version's PING: state 1, horizon 1234, last repair 567, port 45678 (0xb26e). */
    private static final String PREVIOUS_PING = "01" + "00000000000004d2" + "0000000000000237" + "b26e";
    /** The previous version's answer to a PING: the status alone. */
    private static final String PREVIOUS_ANSWER = "01" + "00000000000004d2" + "0000000000000237";
    /** The attributes of ZONED: one, "zone" = "zone-b". */
    private static final String ZONE_B = "01" + "04" + hex("zone") + "06" + hex("zone-b");

    @Test
    void aPingTellsTheCallersAttributesAfterThePort() {
        ByteBuf payload = payload(Ping.frame(ByteBufAllocator.DEFAULT, 7, ZONED, 45_678));
        assertThat(ByteBufUtil.hexDump(payload)).isEqualTo(PREVIOUS_PING + ZONE_B);
        assertThat(Ping.readStatus(payload)).isEqualTo(STATUS);
        assertThat(Ping.readClusterPort(payload)).isEqualTo(45_678);
        assertThat(Ping.readAttributes(payload)).isEqualTo(Map.of("zone", "zone-b"));
        payload.release();
    }

    /** What the previous version reads of a PING is all of its own layout: the new field comes after it. */
    @Test
    void thePreviousVersionReadsANewPingAsItsOwn() {
        ByteBuf payload = payload(Ping.frame(ByteBufAllocator.DEFAULT, 7, ZONED, 45_678));
        assertThat(ByteBufUtil.hexDump(payload, payload.readerIndex(), PeerStatus.WIRE_BYTES + 2)).isEqualTo(PREVIOUS_PING);
        payload.release();
    }

    @Test
    void aPingOfThePreviousVersionTellsNoAttributes() {
        ByteBuf payload = bytes(PREVIOUS_PING);
        assertThat(Ping.readStatus(payload)).isEqualTo(STATUS);
        assertThat(Ping.readClusterPort(payload)).isEqualTo(45_678);
        assertThat(Ping.readAttributes(payload)).isEmpty();
    }

    @Test
    void theAnswerTellsTheAttributesAfterTheStatusWhichThePreviousVersionReadsAlone() {
        ByteBuf payload = payload(Ping.answer(ByteBufAllocator.DEFAULT, 7, ZONED));
        assertThat(ByteBufUtil.hexDump(payload)).isEqualTo(PREVIOUS_ANSWER + ZONE_B);
        assertThat(Ping.readStatus(payload)).isEqualTo(STATUS);
        assertThat(Ping.readAttributes(payload)).isEqualTo(Map.of("zone", "zone-b"));
        payload.release();
    }

    @Test
    void anAnswerOfThePreviousVersionTellsNoAttributes() {
        ByteBuf payload = bytes(PREVIOUS_ANSWER);
        assertThat(Ping.readStatus(payload)).isEqualTo(STATUS);
        assertThat(Ping.readAttributes(payload)).isEmpty();
    }

    /** A later version adds its fields after the attributes: this one reads what it knows. */
    @Test
    void fieldsPastTheAttributesAreIgnored() {
        ByteBuf payload = bytes(PREVIOUS_ANSWER + ZONE_B + "ff00ff");
        assertThat(Ping.readStatus(payload)).isEqualTo(STATUS);
        assertThat(Ping.readAttributes(payload)).isEqualTo(Map.of("zone", "zone-b"));
    }

    @Test
    void attributesCutShortOrNotOfAMembersFormAreNone() {
        assertThat(Ping.readAttributes(bytes("01" + "04" + hex("zone") + "06" + hex("zone")))).as("cut short").isEmpty();
        assertThat(Ping.readAttributes(bytes("01" + "04" + hex("zone") + "02" + hex("a b")))).as("a space").isEmpty();
        assertThat(Ping.readAttributes(bytes("00"))).as("none told").isEmpty();
    }

    private static String hex(String ascii) {
        return HexFormat.of().formatHex(ascii.getBytes(java.nio.charset.StandardCharsets.US_ASCII));
    }

    private static ByteBuf bytes(String hex) {
        return Unpooled.wrappedBuffer(HexFormat.of().parseHex(hex));
    }

    /** The frame's payload: past its length, type and id. */
    private static ByteBuf payload(ByteBuf frame) {
        return frame.skipBytes(Wire.HEADER);
    }
}
