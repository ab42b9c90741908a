package io.ringkv.health;

import java.time.Duration;

/**
 * How a peer's circuit breaker judges it. Calls are counted in a sliding window of the last
 * {@code windowSize} calls; once at least {@code minimumCalls} are in it, the breaker opens when
 * {@code failureRatePercent} of them failed (refused or broken connections, errors; not a request
 * that timed out on a live connection) or {@code slowCallRatePercent} took longer than
 * {@code slowCallThreshold}. After {@code openFor} it lets {@code probeCalls} through; if they
 * succeed the peer is back.
 */
public record BreakerSettings(
        int windowSize,
        int minimumCalls,
        float failureRatePercent,
        Duration slowCallThreshold,
        float slowCallRatePercent,
        Duration openFor,
        int probeCalls) {
}
