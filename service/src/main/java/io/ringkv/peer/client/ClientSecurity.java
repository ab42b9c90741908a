package io.ringkv.peer.client;

import io.netty.channel.Channel;
import reactor.netty.http.client.HttpClient;

/**
 * What protects the node's calls to other nodes: nothing ({@link #PLAINTEXT}), or TLS when
 * {@code ringkv.tls.enabled} (io.ringkv.tls). Asked at each new connection, so that a
 * certificate replaced on disk is used from the next one on.
 */
public interface ClientSecurity {

    ClientSecurity PLAINTEXT = new ClientSecurity() {
        @Override
        public void secure(Channel channel, String peerHost, int port) {
        }

        @Override
        public HttpClient secure(HttpClient client) {
            return client;
        }

        @Override
        public String scheme() {
            return "http";
        }
    };

    /**
     * Prepares a new connection to a peer's cluster port, before it is active.
     *
     * @param peerHost the host of the peer's name, which the peer must prove it is
     */
    void secure(Channel channel, String peerHost, int port);

    /**
     * The client for one request to a node's public port: the node's certificate is checked
     * against the CA, not against the host, which may be an address (see io.ringkv.tls.TlsContexts).
     */
    HttpClient secure(HttpClient client);

    /** The scheme of a node's public port: {@code http} or {@code https}. */
    String scheme();
}
