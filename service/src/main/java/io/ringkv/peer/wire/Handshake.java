package io.ringkv.peer.wire;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * The start of every connection: both sides prove that they know the cluster secret without
 * sending it, by an HMAC-SHA256 over fresh random nonces (challenge-response), and tell each
 * other their names on the ring and the protocol version they speak.
 *
 * <pre>
 *   server: HELLO    magic "RKV1", version, server nonce
 *   client: AUTH     version, client nonce, client name, HMAC(secret, "client" | server nonce | client nonce | client name)
 *   server: WELCOME  version, HMAC(secret, "server" | client nonce | server nonce | server name), server name
 *       or: REFUSED  reason, and the server closes the connection
 * </pre>
 *
 * Each proof covers both nonces, so a recorded exchange is worth nothing later, and the server's
 * proof shows the client it reached a member of its own cluster, not something else listening on
 * the port. Proofs are compared in constant time. Pure apart from the random nonces.
 */
public final class Handshake {

    public static final int NONCE_BYTES = 32;
    private static final int PROOF_BYTES = 32;
    private static final int MAGIC = 0x524b5631; // "RKV1"
    private static final String ALGORITHM = "HmacSHA256";
    private static final byte[] CLIENT = "ringkv client".getBytes(StandardCharsets.UTF_8);
    private static final byte[] SERVER = "ringkv server".getBytes(StandardCharsets.UTF_8);
    /**
     * A DRBG seeded once from the system: nonces are drawn on event loops, where the default
     * source would read /dev/urandom (a blocking file read) on every call.
     */
    private static final SecureRandom RANDOM = drbg();

    private final SecretKeySpec key;

    /** @param secret the cluster secret; not empty */
    public Handshake(String secret) {
        if (secret == null || secret.isEmpty()) {
            throw new IllegalArgumentException("the cluster secret must not be empty");
        }
        this.key = new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), ALGORITHM);
    }

    private static SecureRandom drbg() {
        try {
            SecureRandom random = SecureRandom.getInstance("DRBG");
            random.nextBytes(new byte[NONCE_BYTES]); // seeds it now, off any event loop
            return random;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("no DRBG SecureRandom in this JVM", e);
        }
    }

    public static byte[] nonce() {
        byte[] nonce = new byte[NONCE_BYTES];
        RANDOM.nextBytes(nonce);
        return nonce;
    }

    /** The client's proof: it knows the secret, for this server's challenge, under this name. */
    public byte[] clientProof(byte[] serverNonce, byte[] clientNonce, String clientName) {
        return mac(CLIENT, serverNonce, clientNonce, clientName.getBytes(StandardCharsets.UTF_8));
    }

    /** The server's proof: it knows the secret too, for this client's challenge, under this name. */
    public byte[] serverProof(byte[] clientNonce, byte[] serverNonce, String serverName) {
        return mac(SERVER, clientNonce, serverNonce, serverName.getBytes(StandardCharsets.UTF_8));
    }

    /** Constant time: how much of a guess is right cannot be learned from how long it takes. */
    public static boolean matches(byte[] expected, byte[] presented) {
        return MessageDigest.isEqual(expected, presented);
    }

    private byte[] mac(byte[] role, byte[] first, byte[] second, byte[] name) {
        try {
            Mac mac = Mac.getInstance(ALGORITHM);
            mac.init(key);
            mac.update(role);
            mac.update(first);
            mac.update(second);
            mac.update(name);
            return mac.doFinal();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HMAC-SHA256 is not available", e);
        }
    }

    // ---- the messages ---------------------------------------------------------------------------

    public record Hello(int version, byte[] serverNonce) {
    }

    public record Auth(int version, byte[] clientNonce, String clientName, byte[] proof) {
    }

    public record Welcome(int version, byte[] proof, String serverName) {
    }

    public static ByteBuf hello(ByteBufAllocator allocator, int version, byte[] serverNonce) {
        ByteBuf frame = Wire.begin(allocator, Wire.HELLO, 0, 6 + NONCE_BYTES);
        frame.writeInt(MAGIC);
        frame.writeShort(version);
        frame.writeBytes(serverNonce);
        return Wire.seal(frame);
    }

    public static Hello readHello(ByteBuf payload) {
        if (payload.readableBytes() < 6 + NONCE_BYTES || payload.readInt() != MAGIC) {
            throw new Wire.MalformedFrameException("not a ringkv node's greeting");
        }
        int version = payload.readUnsignedShort();
        return new Hello(version, bytes(payload, NONCE_BYTES));
    }

    public static ByteBuf auth(ByteBufAllocator allocator, int version, byte[] clientNonce, String clientName, byte[] proof) {
        return introduction(allocator, Wire.AUTH, version, clientNonce, clientName, proof);
    }

    public static Auth readAuth(ByteBuf payload) {
        Introduction auth = readIntroduction(payload, NONCE_BYTES, "AUTH");
        if (payload.readableBytes() != PROOF_BYTES) {
            throw new Wire.MalformedFrameException("an AUTH without its proof");
        }
        return new Auth(auth.version(), auth.field(), auth.name(), bytes(payload, PROOF_BYTES));
    }

    public static ByteBuf welcome(ByteBufAllocator allocator, int version, byte[] proof, String serverName) {
        return introduction(allocator, Wire.WELCOME, version, proof, serverName, new byte[0]);
    }

    public static Welcome readWelcome(ByteBuf payload) {
        Introduction welcome = readIntroduction(payload, PROOF_BYTES, "WELCOME");
        return new Welcome(welcome.version(), welcome.field(), welcome.name());
    }

    /**
     * AUTH and WELCOME begin alike: the version, a field of fixed length (the client's nonce, the
     * server's proof), the sender's name; AUTH then carries its proof.
     */
    private record Introduction(int version, byte[] field, String name) {
    }

    private static ByteBuf introduction(ByteBufAllocator allocator, byte type, int version, byte[] field, String sender,
            byte[] trailer) {
        byte[] name = sender.getBytes(StandardCharsets.UTF_8);
        ByteBuf frame = Wire.begin(allocator, type, 0, 4 + field.length + name.length + trailer.length);
        frame.writeShort(version);
        frame.writeBytes(field);
        Wire.writeKey(frame, name);
        frame.writeBytes(trailer);
        return Wire.seal(frame);
    }

    private static Introduction readIntroduction(ByteBuf payload, int fieldBytes, String type) {
        if (payload.readableBytes() < 2 + fieldBytes) {
            throw new Wire.MalformedFrameException("a short " + type);
        }
        int version = payload.readUnsignedShort();
        byte[] field = bytes(payload, fieldBytes);
        return new Introduction(version, field, new String(Wire.readKey(payload, 1024), StandardCharsets.UTF_8));
    }

    public static ByteBuf refused(ByteBufAllocator allocator, String reason) {
        byte[] text = reason.getBytes(StandardCharsets.UTF_8);
        ByteBuf frame = Wire.begin(allocator, Wire.REFUSED, 0, text.length);
        frame.writeBytes(text);
        return Wire.seal(frame);
    }

    private static byte[] bytes(ByteBuf payload, int count) {
        byte[] out = new byte[count];
        payload.readBytes(out);
        return out;
    }
}
