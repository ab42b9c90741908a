package io.ringkv.peer.server;

import java.util.function.UnaryOperator;

import reactor.netty.tcp.TcpServer;

/**
 * Changes the cluster port's server before it binds, as Spring Boot's {@code NettyServerCustomizer}
 * does the public port's: TLS (io.ringkv.tls) is one, the tests' fault injection another.
 */
@FunctionalInterface
public interface PeerServerCustomizer extends UnaryOperator<TcpServer> {
}
