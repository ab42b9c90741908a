package io.ringkv.support;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * One HTTP/1.1 exchange written byte for byte, for request forms that a client library would
 * refuse or repair (bad escapes, raw non-ASCII bytes in the request line).
 */
public final class RawHttp {

    private RawHttp() {
    }

    /** Sends {@code method target} with the body, and returns the whole answer (the connection is closed after it). */
    public static String exchange(int port, String method, byte[] target, byte[] body) throws IOException {
        var request = new ByteArrayOutputStream();
        request.writeBytes((method + " ").getBytes(StandardCharsets.US_ASCII));
        request.writeBytes(target);
        request.writeBytes((" HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Length: " + body.length
                + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        request.writeBytes(body);
        return send(port, request.toByteArray());
    }

    /**
     * Writes the bytes as they are and returns everything the server sends until it closes the
     * connection ("" if it closes without a word); fails if it neither answers nor closes in 10 s.
     */
    public static String send(int port, byte[] request) throws IOException {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 2_000);
            socket.setSoTimeout(10_000);
            socket.getOutputStream().write(request);
            socket.getOutputStream().flush();
            InputStream in = socket.getInputStream();
            return new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
        }
    }

    /** The status code of {@link #exchange}'s answer. */
    public static int status(int port, String method, String target, String body) throws IOException {
        String answer = exchange(port, method, target.getBytes(StandardCharsets.ISO_8859_1), body.getBytes(StandardCharsets.UTF_8));
        if (!answer.startsWith("HTTP/1.1 ")) {
            throw new IOException("not an HTTP answer: " + answer);
        }
        return Integer.parseInt(answer.substring(9, 12));
    }
}
