package io.ringkv.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.RecordComponent;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DataObjectPropertyName;
import org.springframework.context.annotation.ClassPathScanningCandidateComponentProvider;
import org.springframework.core.type.filter.AnnotationTypeFilter;
import org.springframework.util.ClassUtils;

/**
 * The reference in {@code docs/} cannot drift from the code: every setting a node binds is in
 * {@code docs/configuration.md}, every metric it registers is in {@code docs/operations.md}, and no
 * page (nor the README) names a {@code ringkv.*} setting or a {@code ringkv_*} metric that does not exist.
 */
class DocumentationTest {

    private static final Path ROOT = repositoryRoot();
    private static final Path CONFIGURATION = ROOT.resolve("docs/configuration.md");
    private static final Path OPERATIONS = ROOT.resolve("docs/operations.md");

    /**
     * {@code ringkv.*} names the pages may use that are not settings of a node: system properties
     * of the tests and of the image's training run, an example, and files.
     */
    private static final Set<String> NOT_SETTINGS = Set.of(
            "ringkv.testing.replica-delay", // the tests' fault injector (io.ringkv.testing.ReplicaDelay)
            "ringkv.aot-training", // the image build's ahead-of-time training run (startup.TrainingRun)
            "ringkv.cluster.ports", // configuration.md's example of an unknown setting, which a node refuses
            "ringkv.jar", "ringkv.json", "ringkv.yaml");

    @Test
    void everySettingIsInTheConfigurationReference() {
        assertThat(settingNames(CONFIGURATION)).containsAll(settings());
    }

    @Test
    void theDocumentationNamesNoSettingThatDoesNotExist() {
        Set<String> settings = settings();
        for (Path page : pages()) {
            assertThat(settingNames(page)).as("ringkv.* settings named in %s", ROOT.relativize(page))
                    .allMatch(name -> settings.contains(name) || isGroupOf(name, settings),
                            "a setting of RingkvProperties, or a group of them");
        }
    }

    @Test
    void everyMetricIsInTheOperationsManual() {
        assertThat(metricNames(OPERATIONS)).containsAll(meters());
    }

    @Test
    void theDocumentationNamesNoMetricThatDoesNotExist() {
        Set<String> meters = meters();
        for (Path page : pages()) {
            assertThat(metricNames(page)).as("ringkv_* metrics named in %s", ROOT.relativize(page))
                    .isSubsetOf(meters);
        }
    }

    @Test
    void settingNamesFollowRelaxedBinding() {
        record Inner(int windowSize, String dnsName) {
        }
        record Outer(java.nio.file.Path dataDir, Inner healthBreaker, Integer eventLoops) {
        }
        assertThat(settingsOf("ringkv", Outer.class)).containsExactlyInAnyOrder("ringkv.data-dir",
                "ringkv.health-breaker.window-size", "ringkv.health-breaker.dns-name", "ringkv.event-loops");
    }

    @Test
    void metersAreFoundWithTheNamesPrometheusGivesThem() {
        String source = """
                Timer.builder("ringkv.client.requests").register(meters);
                Counter.builder("ringkv.repair.bytes").tag("direction", "push").baseUnit("bytes")
                        .register(meters);
                FunctionCounter.builder("ringkv.clock.refused", clock, HybridClock::refused).register(meters);
                Gauge.builder("ringkv.client.bytes.inflight", bytes, ByteBound::held)
                        .baseUnit("bytes")
                        .register(meters);
                Gauge.builder("ringkv.repair.last.completed", ledger, x -> 0).baseUnit("seconds").register(meters);
                Gauge.builder("ringkv.peer.connections", connections, AtomicInteger::get).register(meters);
                MultiGauge.builder("ringkv.zone.members").description("Members").register(meters);
                property(meters, "ringkv.storage.sst.live.bytes", "rocksdb.live-sst-files-size", "Bytes");
                pipeline.addFirst("ringkv.flush", handler);
                """;
        assertThat(metersIn(source)).containsExactlyInAnyOrder("ringkv_client_requests_seconds",
                "ringkv_repair_bytes_total", "ringkv_clock_refused_total", "ringkv_client_bytes_inflight_bytes",
                "ringkv_repair_last_completed_seconds", "ringkv_peer_connections", "ringkv_zone_members",
                "ringkv_storage_sst_live_bytes");
    }

    // ---- the settings -------------------------------------------------------------------------------

    /** Every setting of every {@code @ConfigurationProperties} class of the node, as the docs write it. */
    private static Set<String> settings() {
        var scanner = new ClassPathScanningCandidateComponentProvider(false);
        scanner.addIncludeFilter(new AnnotationTypeFilter(ConfigurationProperties.class));
        Set<String> names = new TreeSet<>();
        for (BeanDefinition candidate : scanner.findCandidateComponents("io.ringkv")) {
            Class<?> type = ClassUtils.resolveClassName(candidate.getBeanClassName(), null);
            if (isMainCode(type)) {
                ConfigurationProperties annotation = type.getAnnotation(ConfigurationProperties.class);
                String prefix = annotation.prefix().isEmpty() ? annotation.value() : annotation.prefix();
                names.addAll(settingsOf(prefix, type));
            }
        }
        assertThat(names).as("settings found in the node's @ConfigurationProperties").contains("ringkv.data-dir");
        return names;
    }

    /** The settings a record binds under {@code prefix}: nested records are groups, anything else is a setting. */
    private static Set<String> settingsOf(String prefix, Class<?> type) {
        Set<String> names = new TreeSet<>();
        for (RecordComponent component : type.getRecordComponents()) {
            String name = prefix + "." + DataObjectPropertyName.toDashedForm(component.getName());
            if (component.getType().isRecord()) {
                names.addAll(settingsOf(name, component.getType()));
            } else {
                names.add(name);
            }
        }
        return names;
    }

    private static boolean isMainCode(Class<?> type) {
        return !type.getProtectionDomain().getCodeSource().getLocation().getPath().endsWith("/test-classes/");
    }

    private static boolean isGroupOf(String name, Set<String> settings) {
        return settings.stream().anyMatch(setting -> setting.startsWith(name + "."));
    }

    private static final Pattern SETTING = Pattern.compile("(?<![\\w./-])ringkv\\.[a-z][a-z0-9-]*(?:\\.[a-z][a-z0-9-]*)*");

    private static Set<String> settingNames(Path page) {
        Set<String> names = matches(SETTING, read(page));
        names.removeAll(NOT_SETTINGS);
        return names;
    }

    // ---- the metrics --------------------------------------------------------------------------------

    /** Every meter the node registers, by the name Prometheus scrapes, found in the main sources. */
    private static Set<String> meters() {
        Set<String> names = new TreeSet<>();
        try (Stream<Path> files = Files.walk(ROOT.resolve("service/src/main/java"))) {
            files.filter(file -> file.toString().endsWith(".java")).forEach(file -> {
                String source = read(file);
                // A name this scan cannot read would leave its meter out of the check unseen.
                assertThat(BUILDER_BY_VARIABLE.matcher(source).find() && !GAUGE_HELPER.matcher(source).find())
                        .as("%s registers a meter by a name that is neither a literal nor given to a (meters, \"ringkv...\") helper",
                                ROOT.relativize(file))
                        .isFalse();
                names.addAll(metersIn(source));
            });
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        assertThat(names).as("meters found in service/src/main/java").contains("ringkv_client_requests_seconds");
        return names;
    }

    /** A Micrometer builder with a literal {@code ringkv.} name, up to its {@code register} call. */
    private static final Pattern BUILDER = Pattern.compile(
            "\\b(Timer|Counter|FunctionCounter|Gauge|MultiGauge)\\.builder\\(\\s*\"(ringkv\\.[a-z.]+)\"(.*?)\\.register\\(",
            Pattern.DOTALL);
    /** A helper that registers a gauge by a name it is given with the registry (StorageMetrics' RocksDB properties). */
    private static final Pattern GAUGE_HELPER = Pattern.compile("\\(\\s*meters\\s*,\\s*\"(ringkv\\.[a-z.]+)\"");
    private static final Pattern BUILDER_BY_VARIABLE = Pattern.compile("\\b(Timer|Counter|FunctionCounter|Gauge|MultiGauge)\\.builder\\(\\s*[a-z]");
    private static final Pattern BASE_UNIT = Pattern.compile("\\.baseUnit\\(\"([a-z]+)\"\\)");

    static Set<String> metersIn(String source) {
        Set<String> names = new TreeSet<>();
        Matcher builder = BUILDER.matcher(source);
        while (builder.find()) {
            Matcher unit = BASE_UNIT.matcher(builder.group(3));
            names.add(prometheusName(builder.group(1), builder.group(2), unit.find() ? unit.group(1) : null));
        }
        Matcher helper = GAUGE_HELPER.matcher(source);
        while (helper.find()) {
            names.add(prometheusName("Gauge", helper.group(1), null));
        }
        return names;
    }

    /** Micrometer's Prometheus naming: snake case, the base unit as a suffix, timers in seconds, counters {@code _total}. */
    private static String prometheusName(String meterType, String name, String baseUnit) {
        String snake = name.replace('.', '_');
        String unit = meterType.equals("Timer") ? "seconds" : baseUnit;
        if (unit != null && !snake.endsWith("_" + unit)) {
            snake += "_" + unit;
        }
        return meterType.endsWith("Counter") ? snake + "_total" : snake;
    }

    private static final Pattern METRIC = Pattern.compile("\\bringkv_[a-z0-9_]*[a-z0-9]");
    /** The series Prometheus makes of a histogram or timer, named in queries. */
    private static final Pattern SERIES_SUFFIX = Pattern.compile("_(bucket|count|sum|max)$");

    private static Set<String> metricNames(Path page) {
        Set<String> names = new TreeSet<>();
        for (String name : matches(METRIC, read(page))) {
            names.add(SERIES_SUFFIX.matcher(name).replaceFirst(""));
        }
        return names;
    }

    // ---- the pages ----------------------------------------------------------------------------------

    private static List<Path> pages() {
        try (Stream<Path> docs = Files.list(ROOT.resolve("docs"))) {
            return Stream.concat(Stream.of(ROOT.resolve("README.md")),
                    docs.filter(file -> file.toString().endsWith(".md")).sorted()).toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Set<String> matches(Pattern pattern, String text) {
        Set<String> found = new TreeSet<>();
        Matcher matcher = pattern.matcher(text);
        while (matcher.find()) {
            found.add(matcher.group());
        }
        return found;
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The checkout's root: the tests run in the service module, one level below it. */
    private static Path repositoryRoot() {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            if (Files.isDirectory(dir.resolve("docs")) && Files.isRegularFile(dir.resolve("service/pom.xml"))) {
                return dir;
            }
        }
        throw new IllegalStateException("no checkout root (docs/ beside service/) above " + Path.of("").toAbsolutePath());
    }
}
