package io.ringkv.peer.wire;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

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
 *   server: HELLO    magic "RKV1", version, server nonce, key ids: count, HMAC(key, "key id" | server nonce)[0..8) each
 *   client: AUTH     version, client nonce, client name, HMAC(key, "client" | server nonce | client nonce | client name)
 *   server: WELCOME  version, HMAC(key, "server" | client nonce | server nonce | server name), server name
 *       or: REFUSED  reason, and the server closes the connection
 * </pre>
 *
 * Each proof covers both nonces, so a recorded exchange is worth nothing later, and the server's
 * proof shows the client it reached a member of its own cluster, not something else listening on
 * the port. Proofs are compared in constant time. Pure apart from the random nonces.
 *
 * <p><b>Two keys, for rotating the secret without a split.</b> A node has its current secret and,
 * during a rotation, the previous one ({@code ringkv.cluster.previous-secret}). The server names
 * in its HELLO the keys it accepts, each by a short HMAC over its fresh nonce (so the ids tell
 * nothing across connections and are no fixed hash of the secret); the client proves with the
 * first of its own keys, current first, that the server accepts, and the server proves back with
 * the same key. A node that has only the old secret and one that has the new one with the old as
 * previous therefore meet on the old key in both directions, in one round trip, and the rollout of
 * a new secret never splits old pods from new ones. A HELLO without key ids (an older node) gets
 * a proof with the current secret. Older nodes ignore the ids, which follow the nonce.
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

    private static final byte[] KEY_ID = "ringkv key id".getBytes(StandardCharsets.UTF_8);
    private static final int KEY_ID_BYTES = 8;
    /** A HELLO names at most this many keys: the current and the previous secret. */
    private static final int MAX_KEYS = 2;

    /** This node's keys, the current secret's first. */
    private final List<Key> keys;

    /** @param secret the cluster secret; not empty */
    public Handshake(String secret) {
        this(secret, null);
    }

    /**
     * @param secret         the cluster secret; not empty
     * @param previousSecret the secret it replaces, accepted too while a rotation rolls out; null or empty: none
     */
    public Handshake(String secret, String previousSecret) {
        if (secret == null || secret.isEmpty()) {
            throw new IllegalArgumentException("the cluster secret must not be empty");
        }
        List<Key> all = new ArrayList<>(List.of(new Key(secret)));
        if (previousSecret != null && !previousSecret.isEmpty() && !previousSecret.equals(secret)) {
            all.add(new Key(previousSecret));
        }
        this.keys = List.copyOf(all);
    }

    /** One secret as an HMAC key; which of a node's keys a connection uses. */
    public static final class Key {
        private final SecretKeySpec spec;

        private Key(String secret) {
            this.spec = new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), ALGORITHM);
        }
    }

    /** The ids of this node's keys for a HELLO with this nonce, the current secret's first. */
    public List<byte[]> keyIds(byte[] serverNonce) {
        return keys.stream().map(key -> keyId(key, serverNonce)).toList();
    }

    /**
     * The client's key for this server: the first of its own, current first, that the server
     * names; the current one if the server names none it has, or none at all (an older node).
     */
    public Key keyFor(Hello hello) {
        List<byte[]> offered = hello.keyIds();
        for (Key key : keys) {
            byte[] id = keyId(key, hello.serverNonce());
            if (offered.stream().anyMatch(candidate -> MessageDigest.isEqual(candidate, id))) {
                return key;
            }
        }
        return keys.get(0);
    }

    private static byte[] keyId(Key key, byte[] serverNonce) {
        return Arrays.copyOf(mac(key, KEY_ID, serverNonce), KEY_ID_BYTES);
    }

    /** The server's side: the key of this node's that the client's proof was made with, if any. */
    public Optional<Key> provenKey(byte[] serverNonce, Auth auth) {
        Key proven = null;
        for (Key key : keys) {
            // Every key is tried, so the time taken does not tell which one matched.
            if (matches(clientProof(key, serverNonce, auth.clientNonce(), auth.clientName()), auth.proof()) && proven == null) {
                proven = key;
            }
        }
        return Optional.ofNullable(proven);
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

    /** The client's proof: it knows the key's secret, for this server's challenge, under this name. */
    public byte[] clientProof(Key key, byte[] serverNonce, byte[] clientNonce, String clientName) {
        return mac(key, CLIENT, serverNonce, clientNonce, clientName.getBytes(StandardCharsets.UTF_8));
    }

    /** The server's proof: it knows the key's secret too, for this client's challenge, under this name. */
    public byte[] serverProof(Key key, byte[] clientNonce, byte[] serverNonce, String serverName) {
        return mac(key, SERVER, clientNonce, serverNonce, serverName.getBytes(StandardCharsets.UTF_8));
    }

    /** Constant time: how much of a guess is right cannot be learned from how long it takes. */
    public static boolean matches(byte[] expected, byte[] presented) {
        return MessageDigest.isEqual(expected, presented);
    }

    private static byte[] mac(Key key, byte[]... parts) {
        try {
            Mac mac = Mac.getInstance(ALGORITHM);
            mac.init(key.spec);
            for (byte[] part : parts) {
                mac.update(part);
            }
            return mac.doFinal();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HMAC-SHA256 is not available", e);
        }
    }

    // ---- the messages ---------------------------------------------------------------------------

    /** @param keyIds the ids of the keys the server accepts; empty from an older node */
    public record Hello(int version, byte[] serverNonce, List<byte[]> keyIds) {
    }

    public record Auth(int version, byte[] clientNonce, String clientName, byte[] proof) {
    }

    public record Welcome(int version, byte[] proof, String serverName) {
    }

    public static ByteBuf hello(ByteBufAllocator allocator, int version, byte[] serverNonce, List<byte[]> keyIds) {
        ByteBuf frame = Wire.begin(allocator, Wire.HELLO, 0, 7 + NONCE_BYTES + KEY_ID_BYTES * keyIds.size());
        frame.writeInt(MAGIC);
        frame.writeShort(version);
        frame.writeBytes(serverNonce);
        frame.writeByte(keyIds.size());
        keyIds.forEach(frame::writeBytes);
        return Wire.seal(frame);
    }

    public static Hello readHello(ByteBuf payload) {
        if (payload.readableBytes() < 6 + NONCE_BYTES || payload.readInt() != MAGIC) {
            throw new Wire.MalformedFrameException("not a ringkv node's greeting");
        }
        int version = payload.readUnsignedShort();
        byte[] nonce = bytes(payload, NONCE_BYTES);
        List<byte[]> keyIds = new ArrayList<>();
        if (payload.isReadable()) {
            int count = payload.readUnsignedByte();
            if (count > MAX_KEYS || payload.readableBytes() != count * KEY_ID_BYTES) {
                throw new Wire.MalformedFrameException("a greeting with " + count + " key ids in " + payload.readableBytes() + " bytes");
            }
            for (int i = 0; i < count; i++) {
                keyIds.add(bytes(payload, KEY_ID_BYTES));
            }
        }
        return new Hello(version, nonce, List.copyOf(keyIds));
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
