package io.ringkv.support;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** A peer that accepts connections and never answers: a hung process, as far as a client can tell. */
public final class HungPeer implements AutoCloseable {

    private final ServerSocket server;
    private final List<Socket> held = new CopyOnWriteArrayList<>();
    private final Thread acceptor;

    public HungPeer() throws IOException {
        server = new ServerSocket(0, 128, InetAddress.getLoopbackAddress());
        acceptor = new Thread(() -> {
            while (!server.isClosed()) {
                try {
                    held.add(server.accept());
                } catch (IOException closed) {
                    return;
                }
            }
        }, "hung-peer");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    public int port() {
        return server.getLocalPort();
    }

    public int connectionsAccepted() {
        return held.size();
    }

    @Override
    public void close() throws IOException {
        server.close();
        for (Socket socket : held) {
            socket.close();
        }
    }
}
