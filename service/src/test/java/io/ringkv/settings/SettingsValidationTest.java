package io.ringkv.settings;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.client.ReactorResourceFactory;

import io.netty.util.concurrent.EventExecutor;
import io.ringkv.peer.PeerConfiguration;
import io.ringkv.ring.HashRing;

/** Each setting is checked where it is declared, and a bad one is reported in one line that names it. */
class SettingsValidationTest {

    @Configuration(proxyBeanMethods = false)
    @EnableConfigurationProperties(RingkvProperties.class)
    static class SettingsOnly {
    }

    @TempDir
    Path dir;

    private ApplicationContextRunner node(String... settings) {
        return new ApplicationContextRunner()
                .withUserConfiguration(SettingsOnly.class)
                .withPropertyValues("ringkv.data-dir=" + dir.resolve("data"))
                .withPropertyValues(settings);
    }

    @Test
    void theDefaultsAreValid() {
        node().run(context -> {
            assertThat(context).hasNotFailed();
            RingkvProperties properties = context.getBean(RingkvProperties.class);
            assertThat(properties.cluster().vnodes()).isEqualTo(HashRing.DEFAULT_VNODES);
            assertThat(properties.eventLoopCount()).as("one event loop per processor").isEqualTo(Runtime.getRuntime().availableProcessors());
            assertThat(properties.cluster().listenPort()).as("a free port").isZero();
        });
    }

    @Configuration(proxyBeanMethods = false)
    static class EventLoops {
        @Bean
        ReactorResourceFactory reactorResourceFactory(RingkvProperties properties) {
            return new PeerConfiguration().reactorResourceFactory(properties);
        }
    }

    @Test
    void theNodeRunsAsManyEventLoopsAsSet() {
        node("ringkv.event-loops=3").withUserConfiguration(EventLoops.class).run(context -> {
            int loops = 0;
            for (EventExecutor ignored : context.getBean(ReactorResourceFactory.class).getLoopResources().onServer(true)) {
                loops++;
            }
            assertThat(loops).isEqualTo(3);
        });
    }

    @Test
    void anEmptyClusterPortIsAFreeOne() {
        node("ringkv.cluster.port=").run(context ->
                assertThat(context.getBean(RingkvProperties.class).cluster().listenPort()).isZero());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "ringkv.health.breaker.window-size=0        | Invalid setting ringkv.health.breaker.window-size: must be positive, got 0",
            "ringkv.replication.timeout=0ms             | Invalid setting ringkv.replication.timeout: must be positive, got PT0S",
            "ringkv.clock.max-offset=500us              | Invalid setting ringkv.clock.max-offset: must be positive, got PT0.0005S",
            "ringkv.hints.max-size=0                    | Invalid setting ringkv.hints.max-size: must be positive, got 0B",
            "ringkv.replication.read-hedge-delay=-1ms   | Invalid setting ringkv.replication.read-hedge-delay: must not be negative, got PT-0.001S",
            "ringkv.cleanup.settle=-1s                  | Invalid setting ringkv.cleanup.settle: must not be negative, got PT-1S",
            "ringkv.startup.warm-up-requests=-1         | Invalid setting ringkv.startup.warm-up-requests: must not be negative, got -1",
            "ringkv.health.breaker.failure-rate=0       | Invalid setting ringkv.health.breaker.failure-rate: must be a percentage above 0 and at most 100, got 0.0",
            "ringkv.health.breaker.slow-call-rate=100.5 | Invalid setting ringkv.health.breaker.slow-call-rate: must be a percentage above 0 and at most 100, got 100.5",
            "ringkv.cluster.port=70000                  | Invalid setting ringkv.cluster.port: must be a TCP port (1-65535), or unset for a free one, got 70000",
            "ringkv.cluster.vnodes=0                    | Invalid setting ringkv.cluster.vnodes: must be positive, got 0",
            "ringkv.event-loops=0                       | Invalid setting ringkv.event-loops: must be positive, got 0",
            "ringkv.max-value-size=300MB                | Invalid setting ringkv.max-value-size: must be between 0 and 256MB, got 314572800B",
            "ringkv.overload.max-bytes-in-flight=1MB    | Invalid setting ringkv.overload.max-bytes-in-flight: 1048576 bytes is less than ringkv.max-value-size",
            "ringkv.repair.interval=13h                 | Invalid setting ringkv.repair.interval: must be at most half of ringkv.storage.tombstone-grace-period",
            "ringkv.cluster.self=ftp://a:1              | Invalid setting ringkv.cluster.self: 'ftp://a:1' is not an http:// or https:// URL",
            "ringkv.cluster.peers=http://a:1,http://a:1 | Invalid setting ringkv.cluster.peers: 'http://a:1' is listed twice",
            "ringkv.cluster.discovery.dns-name=ringkv   | Invalid setting ringkv.cluster.self: with DNS discovery it must be this node's stable DNS name",
            "ringkv.cluster.zone=eu west                | Invalid setting ringkv.cluster.zone: must be a Kubernetes label value (letters, digits, '-', '_' and '.', beginning and ending with a letter or digit, at most 63 characters), got 'eu west'",
            "ringkv.cluster.zones-by-ordinal=a,-b       | Invalid setting ringkv.cluster.zones-by-ordinal: each zone must be a Kubernetes label value (letters, digits, '-', '_' and '.', beginning and ending with a letter or digit, at most 63 characters), got '-b'",
            "ringkv.cluster.zone-from-node=Worker/1     | Invalid setting ringkv.cluster.zone-from-node: must be a Kubernetes Node's name",
    })
    void aBadSettingIsNamedInOneLine(String setting, String expected) {
        node(setting).run(context -> assertThat(analysis(context.getStartupFailure()).getDescription()).startsWith(expected));
    }

    @Test
    void peersNeedASecret() {
        String peers = "ringkv.cluster.peers=http://a:1,http://b:1";
        node(peers).run(context -> assertThat(analysis(context.getStartupFailure()).getDescription())
                .startsWith("Invalid setting ringkv.cluster.secret: is required when the node has peers"));
        node(peers, "ringkv.cluster.secret=s").run(context -> assertThat(context).hasNotFailed());
    }

    @Test
    void theDataDirectoryMustBeWritable() throws Exception {
        Files.writeString(dir.resolve("a-file"), "not a directory");
        node("ringkv.data-dir=" + dir.resolve("a-file/data")).run(context -> {
            FailureAnalysis analysis = analysis(context.getStartupFailure());
            assertThat(analysis.getDescription()).startsWith("Invalid setting ringkv.data-dir: '" + dir.resolve("a-file/data")
                    + "' is not a writable directory (");
            assertThat(analysis.getAction()).contains("RINGKV_DATADIR");
        });
    }

    @Test
    void aDepartureMustOutlastTwoDiscoveryRounds() {
        node("ringkv.cluster.self=http://ringkv-0.ringkv:8080", "ringkv.cluster.discovery.dns-name=ringkv",
                "ringkv.cluster.secret=s", "ringkv.cluster.departure.stateful-set=ringkv",
                "ringkv.cluster.discovery.refresh-interval=30s", "ringkv.cluster.departure.timeout=60s")
                .run(context -> assertThat(analysis(context.getStartupFailure()).getDescription())
                        .startsWith("Invalid setting ringkv.cluster.departure.timeout: must be longer than two discovery rounds (PT1M"));
    }

    @Test
    void anAutomaticCleanupWaitsLongerThanTwoDiscoveryRounds() {
        String[] discovery = {"ringkv.cluster.self=http://ringkv-0.ringkv:8080", "ringkv.cluster.discovery.dns-name=ringkv",
                "ringkv.cluster.secret=s", "ringkv.cluster.discovery.refresh-interval=30s"};
        node(discovery).withPropertyValues("ringkv.cleanup.settle=60s")
                .run(context -> assertThat(analysis(context.getStartupFailure()).getDescription())
                        .startsWith("Invalid setting ringkv.cleanup.settle: must be 0 (off) or longer than two discovery rounds (PT1M"));
        node(discovery).withPropertyValues("ringkv.cleanup.settle=0").run(context -> assertThat(context).hasNotFailed());
        node("ringkv.cleanup.settle=1s").run(context -> assertThat(context).as("a static ring has no rounds to wait for").hasNotFailed());
    }

    private static FailureAnalysis analysis(Throwable failure) {
        assertThat(failure).as("the node refuses to start").isNotNull();
        FailureAnalysis analysis = new InvalidSettingFailureAnalyzer().analyze(failure);
        assertThat(analysis).as("a bad setting, reported: %s", failure).isNotNull();
        return analysis;
    }
}
