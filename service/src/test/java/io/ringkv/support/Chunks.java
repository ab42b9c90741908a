package io.ringkv.support;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads a chunked response off the socket and splits it by the HTTP/1.1 chunk framing itself, so
 * a test sees the chunks exactly as the server framed them, not as the network happened to cut them.
 */
public final class Chunks {

    private Chunks() {
    }

    public record Response(int status, List<String> chunks) {
    }

    public static Response get(String url) {
        List<String> chunks = new ArrayList<>();
        int status = stream(url, chunk -> chunks.add(new String(chunk, StandardCharsets.UTF_8)));
        return new Response(status, chunks);
    }

    /** Hands each chunk to the consumer as it is read, holding none of them; returns the status. */
    public static int stream(String url, java.util.function.Consumer<byte[]> consumer) {
        URI uri = URI.create(url);
        try (Socket socket = new Socket(uri.getHost(), uri.getPort())) {
            socket.setSoTimeout(60_000);
            String request = "GET " + uri.getRawPath() + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery())
                    + " HTTP/1.1\r\nHost: " + uri.getHost() + "\r\nConnection: close\r\n\r\n";
            socket.getOutputStream().write(request.getBytes(StandardCharsets.US_ASCII));
            InputStream in = new BufferedInputStream(socket.getInputStream());
            int status = Integer.parseInt(readLine(in).split(" ")[1]);
            boolean chunked = false;
            for (String header = readLine(in); !header.isEmpty(); header = readLine(in)) {
                chunked |= header.equalsIgnoreCase("transfer-encoding: chunked");
            }
            if (!chunked) {
                return status;
            }
            for (int size = Integer.parseInt(readLine(in).trim(), 16); size > 0; size = Integer.parseInt(readLine(in).trim(), 16)) {
                consumer.accept(in.readNBytes(size));
                readLine(in);
            }
            return status;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String readLine(InputStream in) throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        for (int b = in.read(); b != '\n'; b = in.read()) {
            if (b < 0) {
                throw new IOException("the response ended early");
            }
            if (b != '\r') {
                line.write(b);
            }
        }
        return line.toString(StandardCharsets.US_ASCII);
    }
}
