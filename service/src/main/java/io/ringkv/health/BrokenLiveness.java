package io.ringkv.health;

import org.springframework.boot.availability.AvailabilityChangeEvent;
import org.springframework.boot.availability.LivenessState;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.ApplicationListener;

/**
 * Liveness BROKEN that stays broken: what a node reports when it must be restarted (its store fell
 * behind its peers' purges, {@code tombstones.PurgeHorizonCheck}). Spring Boot declares liveness
 * CORRECT once the application has started: a peer's PING can find the store behind before that
 * (the peer server answers first), and the restart that clears it must still come. So it is said
 * again once ready.
 */
public final class BrokenLiveness implements ApplicationListener<ApplicationReadyEvent> {
    private final ApplicationEventPublisher events;
    private volatile boolean broken;

    public BrokenLiveness(ApplicationEventPublisher events) {
        this.events = events;
    }

    public void report() {
        broken = true;
        AvailabilityChangeEvent.publish(events, this, LivenessState.BROKEN);
    }

    @Override
    public void onApplicationEvent(ApplicationReadyEvent event) {
        if (broken) {
            AvailabilityChangeEvent.publish(events, this, LivenessState.BROKEN);
        }
    }
}
