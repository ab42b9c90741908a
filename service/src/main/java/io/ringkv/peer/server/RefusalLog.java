package io.ringkv.peer.server;

import java.util.HashMap;
import java.util.Map;

/**
 * Which refusals on the cluster port are worth a log line: the first from an address (its IP,
 * not its port, which changes with every attempt), then again only once {@code quiet} has passed,
 * so that a peer retrying with a wrong secret, or a flood from many ports, writes one line.
 * Remembers at most {@code maxAddresses}: past that, those quiet long enough are forgotten, and if
 * none is, all are (a flood from many addresses costs a few lines, never the heap). Plain Java.
 */
final class RefusalLog {

    private final int maxAddresses;
    private final long quietMillis;
    private final Map<String, Long> loggedAt = new HashMap<>();

    RefusalLog(int maxAddresses, long quietMillis) {
        this.maxAddresses = maxAddresses;
        this.quietMillis = quietMillis;
    }

    /** Whether a refusal from the address at {@code nowMillis} should be logged; it is remembered if so. */
    synchronized boolean shouldLog(String address, long nowMillis) {
        Long last = loggedAt.get(address);
        if (last != null && nowMillis - last < quietMillis) {
            return false;
        }
        if (last == null && loggedAt.size() >= maxAddresses) {
            loggedAt.values().removeIf(at -> nowMillis - at >= quietMillis);
            if (loggedAt.size() >= maxAddresses) {
                loggedAt.clear();
            }
        }
        loggedAt.put(address, nowMillis);
        return true;
    }

    /** A peer from the address proved the secret: its next refusal is news again. */
    synchronized void forget(String address) {
        loggedAt.remove(address);
    }

    synchronized int size() {
        return loggedAt.size();
    }
}
