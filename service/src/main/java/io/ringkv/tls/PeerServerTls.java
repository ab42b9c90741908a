package io.ringkv.tls;

import java.util.Collection;
import java.util.function.Supplier;

import io.ringkv.peer.server.PeerServerCustomizer;
import reactor.netty.tcp.TcpServer;

/**
 * Mutual TLS on the cluster port: each new connection gets the certificates as they are then,
 * and must present a certificate the CA signed for the host of a member
 * ({@link PeerIdentityCheck}) before a byte of the peer protocol reaches the session.
 */
final class PeerServerTls implements PeerServerCustomizer {

    /** The TLS handler's name in a connection's pipeline, on both ends. */
    static final String HANDLER = "ringkv.tls";

    private final TlsCertificates certificates;
    private final Supplier<Collection<String>> members;

    /** @param members the names of the members this node placed on its ring, current or future */
    PeerServerTls(TlsCertificates certificates, Supplier<Collection<String>> members) {
        this.certificates = certificates;
        this.members = members;
    }

    /** Applied last among the customizers, so that TLS is first in the pipeline, next to the socket. */
    @Override
    public TcpServer apply(TcpServer server) {
        return server.doOnChannelInit((observer, channel, address) -> channel.pipeline()
                .addFirst(HANDLER, certificates.current().peerServer().newHandler(channel.alloc()))
                .addAfter(HANDLER, "ringkv.tls.identity", new PeerIdentityCheck(members)));
    }
}
