package io.ringkv.tls;

import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;

import io.netty.channel.Channel;
import io.netty.handler.ssl.SslHandler;
import io.ringkv.peer.client.ClientSecurity;
import reactor.netty.http.client.HttpClient;

/** The node's calls to other nodes over TLS, with the certificates as they are at each new connection. */
final class PeerClientTls implements ClientSecurity {

    private final TlsCertificates certificates;

    PeerClientTls(TlsCertificates certificates) {
        this.certificates = certificates;
    }

    /**
     * First in the pipeline, under the peer's host: its certificate must be for it (TLS's hostname
     * check; an IPv6 address without the URL's brackets).
     */
    @Override
    public void secure(Channel channel, String peerHost, int port) {
        String host = peerHost.startsWith("[") && peerHost.endsWith("]") ? peerHost.substring(1, peerHost.length() - 1) : peerHost;
        channel.pipeline().addFirst(PeerServerTls.HANDLER, certificates.current().peerClient().newHandler(channel.alloc(), host, port));
    }

    @Override
    public HttpClient secure(HttpClient client) {
        return client.secure(spec -> spec.sslContext(certificates.current().nodeInfo()).handlerConfigurator(PeerClientTls::withoutHostnameCheck));
    }

    @Override
    public String scheme() {
        return "https";
    }

    /** Reactor Netty's client checks the hostname unless told otherwise; see {@link TlsContexts#nodeInfo}. */
    private static void withoutHostnameCheck(SslHandler handler) {
        SSLEngine engine = handler.engine();
        SSLParameters parameters = engine.getSSLParameters();
        parameters.setEndpointIdentificationAlgorithm(null);
        engine.setSSLParameters(parameters);
    }
}
