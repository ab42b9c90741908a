package io.ringkv.backup;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.time.Duration;

import io.ringkv.overload.Throttle;

/**
 * A stream read no faster than its {@link Throttle} allows: an upload of a snapshot takes the
 * disk and the network at the backup's rate, not all of them. It waits by sleeping, so it is read
 * only on a thread that may block (the backup's own).
 */
final class ThrottledInputStream extends FilterInputStream {

    private final Throttle throttle;

    ThrottledInputStream(InputStream in, Throttle throttle) {
        super(in);
        this.throttle = throttle;
    }

    @Override
    public int read() throws IOException {
        int next = super.read();
        if (next >= 0) {
            pace(1);
        }
        return next;
    }

    @Override
    public int read(byte[] buffer, int offset, int length) throws IOException {
        int read = super.read(buffer, offset, length);
        if (read > 0) {
            pace(read);
        }
        return read;
    }

    private void pace(int bytes) throws InterruptedIOException {
        Duration wait = throttle.reserve(bytes);
        if (wait.isPositive()) {
            try {
                Thread.sleep(wait);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException("the backup was stopped");
            }
        }
    }
}
