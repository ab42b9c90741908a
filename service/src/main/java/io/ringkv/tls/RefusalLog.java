package io.ringkv.tls;

import java.util.concurrent.atomic.AtomicLong;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Says in the log that the cluster port refused a connection, at most once every ten seconds,
 * with the number left unsaid since: a flood of refused connections must not become a flood of
 * log lines.
 */
final class RefusalLog {

    private static final Logger log = LoggerFactory.getLogger(RefusalLog.class);
    private static final long EVERY_NANOS = 10_000_000_000L;

    private final AtomicLong nextAt = new AtomicLong(System.nanoTime());
    private final AtomicLong unsaid = new AtomicLong();

    void refused(Object remote, String why) {
        long now = System.nanoTime();
        long next = nextAt.get();
        if (now - next >= 0 && nextAt.compareAndSet(next, now + EVERY_NANOS)) {
            long more = unsaid.getAndSet(0);
            log.warn("refused a peer connection from {}: {}{}", remote, why,
                    more == 0 ? "" : " (and " + more + " more refused since the last such line)");
        } else {
            unsaid.incrementAndGet();
        }
    }
}
