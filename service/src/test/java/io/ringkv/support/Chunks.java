package io.ringkv.support;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.FilterInputStream;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

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
    public static int stream(String url, Consumer<byte[]> consumer) {
        return stream(url, () -> 0, consumer);
    }

    /**
     * Like {@link #stream(String, java.util.function.Consumer)}, read no faster than
     * {@code bytesPerSecond} says at each moment (0: as fast as it comes), through a small socket
     * receive buffer: a slow client, as a server sees one.
     */
    public static int stream(String url, LongSupplier bytesPerSecond, Consumer<byte[]> consumer) {
        URI uri = URI.create(url);
        try (Socket socket = new Socket()) {
            socket.setReceiveBufferSize(64 * 1024);
            socket.connect(new InetSocketAddress(uri.getHost(), uri.getPort()), 5_000);
            socket.setSoTimeout(60_000);
            String request = "GET " + uri.getRawPath() + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery())
                    + " HTTP/1.1\r\nHost: " + uri.getHost() + "\r\nConnection: close\r\n\r\n";
            socket.getOutputStream().write(request.getBytes(StandardCharsets.US_ASCII));
            InputStream in = new BufferedInputStream(new Paced(socket.getInputStream(), bytesPerSecond), 16 * 1024);
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

    /** Sleeps after each read as long as the rate asks for the bytes read. */
    private static final class Paced extends FilterInputStream {
        private final LongSupplier bytesPerSecond;

        Paced(InputStream in, LongSupplier bytesPerSecond) {
            super(in);
            this.bytesPerSecond = bytesPerSecond;
        }

        @Override
        public int read(byte[] buffer, int offset, int length) throws IOException {
            int read = super.read(buffer, offset, length);
            long rate = bytesPerSecond.getAsLong();
            if (read > 0 && rate > 0) {
                try {
                    Thread.sleep(read * 1000L / rate);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new InterruptedIOException();
                }
            }
            return read;
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
