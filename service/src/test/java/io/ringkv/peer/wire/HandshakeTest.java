package io.ringkv.peer.wire;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/** The handshake between two nodes, with one or two keys each: a rotation of the secret splits no one. */
class HandshakeTest {

    private static final Handshake OLD_ONLY = new Handshake("old-secret");
    private static final Handshake NEW_WITH_PREVIOUS = new Handshake("new-secret", "old-secret");
    private static final Handshake NEW_ONLY = new Handshake("new-secret");

    /** Runs the handshake's proofs as the wire carries them; true when both sides accept each other. */
    private static boolean meet(Handshake client, Handshake server) {
        byte[] serverNonce = Handshake.nonce();
        ByteBuf helloFrame = Handshake.hello(ByteBufAllocator.DEFAULT, Wire.VERSION, serverNonce, server.keyIds(serverNonce));
        helloFrame.skipBytes(Wire.HEADER);
        Handshake.Hello hello = Handshake.readHello(helloFrame);
        helloFrame.release();
        Handshake.Key clientKey = client.keyFor(hello);
        byte[] clientNonce = Handshake.nonce();
        var auth = new Handshake.Auth(Wire.VERSION, clientNonce, "http://client:1",
                client.clientProof(clientKey, hello.serverNonce(), clientNonce, "http://client:1"));
        var serverKey = server.provenKey(serverNonce, auth);
        if (serverKey.isEmpty()) {
            return false;
        }
        byte[] serverProof = server.serverProof(serverKey.get(), clientNonce, serverNonce, "http://server:1");
        return Handshake.matches(client.serverProof(clientKey, clientNonce, serverNonce, "http://server:1"), serverProof);
    }

    @Test
    void nodesWithTheSameSecretMeet() {
        assertThat(meet(OLD_ONLY, new Handshake("old-secret"))).isTrue();
    }

    @Test
    void duringARotationOldAndNewNodesMeetBothWays() {
        assertThat(meet(OLD_ONLY, NEW_WITH_PREVIOUS)).as("an old node calling a new one").isTrue();
        assertThat(meet(NEW_WITH_PREVIOUS, OLD_ONLY)).as("a new node calling an old one").isTrue();
        assertThat(meet(NEW_WITH_PREVIOUS, NEW_WITH_PREVIOUS)).isTrue();
        assertThat(meet(NEW_ONLY, NEW_WITH_PREVIOUS)).as("after the rotation, a node without the previous secret").isTrue();
        assertThat(meet(NEW_WITH_PREVIOUS, NEW_ONLY)).isTrue();
    }

    @Test
    void differentSecretsDoNotMeet() {
        assertThat(meet(OLD_ONLY, NEW_ONLY)).isFalse();
        assertThat(meet(NEW_ONLY, OLD_ONLY)).isFalse();
        assertThat(meet(new Handshake("other", "unrelated"), NEW_WITH_PREVIOUS)).isFalse();
    }

    /** A greeting without key ids (a node of an older version) gets a proof with the current secret. */
    @Test
    void anOlderServersGreetingGetsTheCurrentKey() {
        byte[] serverNonce = Handshake.nonce();
        Handshake.Key key = NEW_WITH_PREVIOUS.keyFor(new Handshake.Hello(Wire.VERSION, serverNonce, List.of()));
        byte[] clientNonce = Handshake.nonce();
        var auth = new Handshake.Auth(Wire.VERSION, clientNonce, "http://client:1",
                NEW_WITH_PREVIOUS.clientProof(key, serverNonce, clientNonce, "http://client:1"));
        assertThat(NEW_ONLY.provenKey(serverNonce, auth)).isPresent();
        assertThat(OLD_ONLY.provenKey(serverNonce, auth)).isEmpty();
    }

    /** Key ids are drawn from the nonce: the same secret's id differs on every connection. */
    @Test
    void keyIdsChangeWithTheNonce() {
        assertThat(OLD_ONLY.keyIds(Handshake.nonce()).get(0)).isNotEqualTo(OLD_ONLY.keyIds(Handshake.nonce()).get(0));
        assertThat(NEW_WITH_PREVIOUS.keyIds(Handshake.nonce())).hasSize(2);
        assertThat(new Handshake("same", "same").keyIds(Handshake.nonce())).hasSize(1);
    }
}
