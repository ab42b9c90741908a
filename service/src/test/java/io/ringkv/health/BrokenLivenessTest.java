package io.ringkv.health;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.availability.ApplicationAvailability;
import org.springframework.boot.availability.ApplicationAvailabilityBean;
import org.springframework.boot.availability.LivenessState;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

/**
 * A store found behind its peers' purges reports liveness BROKEN, so that Kubernetes restarts the
 * node and the restart clears the store. A peer's PING can find it while the node is still
 * starting (its peer server answers first), and Spring Boot then declares liveness CORRECT once
 * started: seen on CI, where the node stayed up, served, and handed deleted values back.
 */
class BrokenLivenessTest {

    @Test
    void brokenWhileTheNodeIsStartingStaysBrokenOnceItHasStarted() {
        try (var context = new SpringApplicationBuilder(FoundBehindWhileStarting.class)
                .web(WebApplicationType.NONE).run("--spring.main.banner-mode=off")) {
            assertThat(context.getBean(ApplicationAvailability.class).getLivenessState()).isEqualTo(LivenessState.BROKEN);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @Import(ApplicationAvailabilityBean.class)
    static class FoundBehindWhileStarting {

        @Bean
        BrokenLiveness brokenLiveness(ApplicationEventPublisher events) {
            var liveness = new BrokenLiveness(events);
            liveness.report();
            return liveness;
        }
    }
}
