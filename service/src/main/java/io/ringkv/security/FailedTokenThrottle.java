package io.ringkv.security;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.LongSupplier;

/**
 * Unknown tokens counted per client address, to slow down whoever guesses tokens: once an address
 * has sent {@code maxFailures} unknown tokens within {@code window} of its first, its requests
 * with a token are refused unchecked until that window ends. Addresses below the threshold, and
 * every request without a token, are not slowed.
 *
 * <p>At most {@code maxAddresses} addresses are remembered, the least recently failed forgotten
 * first: a guesser with many addresses costs bounded memory, at worst getting some of its guesses
 * checked. A plain map under a lock, held for a few field updates, rather than a cache library:
 * none is on the class path, and this is all the eviction needed.
 */
final class FailedTokenThrottle {

    private static final class Failures {
        long windowStart;
        int count;
    }

    private final int maxFailures;
    private final long windowNanos;
    private final LongSupplier nanoClock;
    private final Map<String, Failures> byAddress;
    /** The latest end ({@code nanoClock}) of a window in which an address reached {@code maxFailures}. */
    private volatile long refusingUntil;

    FailedTokenThrottle(int maxFailures, Duration window, int maxAddresses, LongSupplier nanoClock) {
        this.maxFailures = maxFailures;
        this.windowNanos = window.toNanos();
        this.nanoClock = nanoClock;
        this.refusingUntil = nanoClock.getAsLong();
        this.byAddress = new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, Failures> eldest) {
                return size() > maxAddresses;
            }
        };
    }

    /**
     * Whether any address may be refused now, without the lock: nearly always none, and then a
     * request need not look up its address nor take the lock the event loops would contend for.
     */
    boolean refusesAny() {
        return nanoClock.getAsLong() - refusingUntil < 0;
    }

    /** How long the address is still refused, if it has failed too often. */
    synchronized Optional<Duration> refusedFor(String address) {
        Failures failures = byAddress.get(address);
        if (failures == null || failures.count < maxFailures) {
            return Optional.empty();
        }
        long left = failures.windowStart + windowNanos - nanoClock.getAsLong();
        if (left <= 0) {
            byAddress.remove(address);
            return Optional.empty();
        }
        return Optional.of(Duration.ofNanos(left));
    }

    /** The address sent an unknown token. */
    synchronized void failed(String address) {
        long now = nanoClock.getAsLong();
        Failures failures = byAddress.computeIfAbsent(address, ignored -> new Failures());
        if (failures.count == 0 || now - failures.windowStart >= windowNanos) {
            failures.windowStart = now;
            failures.count = 0;
        }
        failures.count++;
        long windowEnd = failures.windowStart + windowNanos;
        if (failures.count >= maxFailures && windowEnd - refusingUntil > 0) {
            refusingUntil = windowEnd;
        }
    }

    /** How many addresses are remembered. */
    synchronized int size() {
        return byAddress.size();
    }
}
