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

    FailedTokenThrottle(int maxFailures, Duration window, int maxAddresses, LongSupplier nanoClock) {
        this.maxFailures = maxFailures;
        this.windowNanos = window.toNanos();
        this.nanoClock = nanoClock;
        this.byAddress = new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, Failures> eldest) {
                return size() > maxAddresses;
            }
        };
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
    }

    /** How many addresses are remembered. */
    synchronized int size() {
        return byAddress.size();
    }
}
