package io.ringkv.health;

import java.time.Duration;
import java.util.Map;
import java.util.function.Supplier;
import java.util.stream.Collectors;

import org.springframework.boot.health.actuate.endpoint.CompositeHealthDescriptor;
import org.springframework.boot.health.actuate.endpoint.HealthDescriptor;
import org.springframework.boot.health.actuate.endpoint.IndicatedHealthDescriptor;
import org.springframework.boot.health.contributor.Status;

import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * Whether this node is ready to serve, exactly as its readiness probe says: Actuator's
 * {@code readiness} health group (the application's readiness state, {@code storage} and
 * {@code ring}). {@code GET /v0/status} answers by it, so that a 200 there means the node can
 * coordinate and store: it has found its members, told its peers it is up, warmed up, holds its
 * ranges and is not shutting down. The group's check blocks (the storage contributor touches the
 * disk), so it runs off the event loop, and at most once per {@link #FRESH_FOR} however often
 * it is asked.
 */
public final class Readiness {

    /** How long one check answers for: status polling must not cost a disk write per request. */
    static final Duration FRESH_FOR = Duration.ofMillis(250);

    /** The answer: ready, or not and why (the contributors that are not UP, with their reasons). */
    public record Answer(boolean ready, String reason) {
    }

    private record Checked(Answer answer, long atNanos) {
    }

    private final Supplier<HealthDescriptor> readinessGroup;
    private volatile Checked last;

    /** @param readinessGroup evaluates the readiness group (blocking) */
    public Readiness(Supplier<HealthDescriptor> readinessGroup) {
        this.readinessGroup = readinessGroup;
    }

    public Mono<Answer> check() {
        Checked recent = last;
        if (recent != null && System.nanoTime() - recent.atNanos() < FRESH_FOR.toNanos()) {
            return Mono.just(recent.answer());
        }
        return Mono.fromCallable(() -> {
            Answer answer = answer(readinessGroup.get());
            last = new Checked(answer, System.nanoTime());
            return answer;
        }).subscribeOn(Schedulers.boundedElastic());
    }

    static Answer answer(HealthDescriptor group) {
        if (Status.UP.equals(group.getStatus())) {
            return new Answer(true, "ready");
        }
        if (!(group instanceof CompositeHealthDescriptor composite)) {
            return new Answer(false, "not ready (" + group.getStatus() + ")");
        }
        String down = composite.getComponents().entrySet().stream()
                .filter(component -> !Status.UP.equals(component.getValue().getStatus()))
                .map(component -> component.getKey() + " " + component.getValue().getStatus() + reasonOf(component.getValue()))
                .collect(Collectors.joining("; "));
        return new Answer(false, "not ready: " + down);
    }

    private static String reasonOf(HealthDescriptor component) {
        if (component instanceof IndicatedHealthDescriptor indicated) {
            Map<String, Object> details = indicated.getDetails();
            Object reason = details == null ? null : details.get("reason");
            return reason == null ? "" : " (" + reason + ")";
        }
        return "";
    }
}
