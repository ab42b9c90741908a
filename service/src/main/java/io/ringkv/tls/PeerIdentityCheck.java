package io.ringkv.tls;

import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.Collection;
import java.util.Set;
import java.util.function.Supplier;

import javax.net.ssl.SSLPeerUnverifiedException;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import io.netty.util.ReferenceCountUtil;
import io.ringkv.peer.server.ProvenIdentity;

/**
 * Right after the TLS handler on the cluster port: once the handshake proved the peer holds a
 * certificate the CA signed, checks that the certificate is for the host of a member
 * ({@link PeerIdentity#isMember}); if not, the connection is closed before the peer protocol
 * sees any of it. Which member names the certificate is for stays on the channel
 * ({@link ProvenIdentity#NAMES}), for the session to check the name the peer then claims. A
 * refusal goes to the session as a {@link ProvenIdentity.Refused} event, once per connection,
 * to be counted and logged with the cluster port's other refusals.
 */
public final class PeerIdentityCheck extends ChannelInboundHandlerAdapter {

    private final Supplier<Collection<String>> members;
    private boolean verified;
    private boolean refused;

    PeerIdentityCheck(Supplier<Collection<String>> members) {
        this.members = members;
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object event) throws Exception {
        if (event instanceof SslHandshakeCompletionEvent completion) {
            if (!completion.isSuccess()) {
                // The TLS handler closes the connection itself: no certificate, or not the CA's.
                refuse(ctx, "TLS handshake failed: " + completion.cause());
            } else {
                Set<String> hosts = certificateHosts(ctx);
                if (PeerIdentity.isMember(hosts, members.get())) {
                    ctx.channel().attr(ProvenIdentity.NAMES).set(name -> PeerIdentity.names(hosts, PeerIdentity.hostOf(name)));
                    verified = true;
                } else {
                    refuse(ctx, "its certificate is for " + hosts + ", none of them the host of a member");
                    ctx.close();
                    return;
                }
            }
        }
        super.userEventTriggered(ctx, event);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object message) {
        if (verified) {
            ctx.fireChannelRead(message);
        } else {
            // Nothing reaches the peer protocol from a peer not (yet) known to be a member.
            ReferenceCountUtil.release(message);
            ctx.close();
        }
    }

    /**
     * Before the peer is verified, an error is the TLS handler's (bytes that are no TLS, a failed
     * handshake, which it also reports as an event): one refusal, not also a session's bad frame.
     */
    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) throws Exception {
        if (verified) {
            super.exceptionCaught(ctx, cause);
        } else {
            refuse(ctx, "TLS: " + cause.getMessage());
            ctx.close();
        }
    }

    private void refuse(ChannelHandlerContext ctx, String why) {
        if (!refused) {
            refused = true;
            ctx.fireUserEventTriggered(new ProvenIdentity.Refused(why));
        }
    }

    private static Set<String> certificateHosts(ChannelHandlerContext ctx) {
        try {
            Certificate[] chain = ctx.pipeline().get(SslHandler.class).engine().getSession().getPeerCertificates();
            return chain.length > 0 && chain[0] instanceof X509Certificate certificate ? PeerIdentity.hosts(certificate) : Set.of();
        } catch (SSLPeerUnverifiedException e) {
            return Set.of();
        }
    }
}
