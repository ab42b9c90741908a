package io.ringkv.peer.server;

import java.util.function.Predicate;

import io.netty.util.AttributeKey;

/**
 * What the transport proved about a peer before the handshake, if anything: with mutual TLS
 * (io.ringkv.tls), which member names its certificate is for. The name the peer then claims in
 * the handshake must be one of them, so that a peer holding a member's certificate cannot speak
 * as another member, nor a peer holding the cluster secret alone as any.
 */
public final class ProvenIdentity {

    /** On a channel whose transport proved an identity: whether that identity is this member name's. */
    public static final AttributeKey<Predicate<String>> NAMES = AttributeKey.valueOf("ringkv.peer.proven-identity");

    /**
     * The user event the transport fires when it refuses a connection (no certificate, another
     * CA's, one for no member's host): the session counts and logs it as it does every refusal
     * on the cluster port. The reason must be safe to log.
     */
    public record Refused(String reason) {
    }

    private ProvenIdentity() {
    }
}
