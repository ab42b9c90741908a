package io.ringkv.settings;

import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.StreamSupport;

import org.springframework.beans.factory.config.BeanFactoryPostProcessor;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DataObjectPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.IterableConfigurationPropertySource;
import org.springframework.boot.context.properties.source.UnboundElementsSourceFilter;
import org.springframework.core.annotation.MergedAnnotation;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.stereotype.Component;

/**
 * Stops the node on a {@code ringkv.*} setting that nothing reads, naming it and the nearest
 * known one: a misspelled setting would otherwise leave the node running on a default its
 * operator meant to change.
 *
 * <p>Spring Boot's own check ({@code ignoreUnknownFields = false}) works per prefix, and
 * {@code ringkv.*} is bound by several classes: {@link RingkvProperties}, and those of other
 * packages under it ({@code ringkv.tls}, {@code ringkv.security}), each of which would take the
 * others' settings for unknown. So the node checks once, against the settings of every
 * {@code @ConfigurationProperties} class under {@code ringkv} it has (a test's fault injector's
 * too, when it is on the class path), and before any bean is made: before the data directory is
 * opened.
 *
 * <p>Like Spring Boot's check it reads command-line arguments and configuration files, not
 * environment variables nor JVM system properties ({@link UnboundElementsSourceFilter}): the
 * environment holds variables for other programs as well, such as the {@code RINGKV_TOKEN} the
 * docs' {@code curl} examples use.
 */
@Component
public class UnknownSettings implements BeanFactoryPostProcessor {

    private static final ConfigurationPropertyName ROOT = ConfigurationPropertyName.of("ringkv");

    @Override
    public void postProcessBeanFactory(ConfigurableListableBeanFactory beanFactory) {
        Set<ConfigurationPropertyName> known = known(beanFactory);
        var sourceFilter = new UnboundElementsSourceFilter();
        List<ConfigurationPropertyName> unknown = StreamSupport
                .stream(ConfigurationPropertySources.get(beanFactory.getBean(ConfigurableEnvironment.class)).spliterator(), false)
                .filter(sourceFilter::apply)
                .filter(IterableConfigurationPropertySource.class::isInstance)
                .flatMap(source -> ((IterableConfigurationPropertySource) source).stream())
                .filter(ROOT::isAncestorOf)
                .filter(name -> known.stream().noneMatch(setting -> setting.equals(name) || setting.isAncestorOf(name)
                        || name.isAncestorOf(setting)))
                .distinct().sorted().toList();
        if (!unknown.isEmpty()) {
            throw new UnknownSettingException((unknown.size() == 1 ? "Unknown setting " : "Unknown settings ")
                    + unknown.stream().map(name -> name + " (did you mean " + nearest(name, known) + "?)")
                            .collect(Collectors.joining(", ")));
        }
    }

    /** Every setting the node's {@code ringkv} configuration classes declare. */
    private static Set<ConfigurationPropertyName> known(ConfigurableListableBeanFactory beanFactory) {
        Set<ConfigurationPropertyName> known = new TreeSet<>();
        for (String bean : beanFactory.getBeanDefinitionNames()) {
            Class<?> type = beanFactory.getType(bean, false);
            MergedAnnotation<ConfigurationProperties> annotation = type == null ? MergedAnnotation.missing()
                    : MergedAnnotations.from(type).get(ConfigurationProperties.class);
            if (annotation.isPresent()) {
                var prefix = ConfigurationPropertyName.of(annotation.getString("prefix"));
                if (prefix.equals(ROOT) || ROOT.isAncestorOf(prefix)) {
                    collect(prefix, type, known);
                }
            }
        }
        return known;
    }

    /** A record is a group of settings, one per component; anything else is one setting. */
    private static void collect(ConfigurationPropertyName name, Class<?> type, Set<ConfigurationPropertyName> known) {
        if (!type.isRecord()) {
            known.add(name);
            return;
        }
        for (var component : type.getRecordComponents()) {
            collect(name.append(DataObjectPropertyName.toDashedForm(component.getName())), component.getType(), known);
        }
    }

    private static ConfigurationPropertyName nearest(ConfigurationPropertyName name, Set<ConfigurationPropertyName> known) {
        String given = name.toString();
        return known.stream().min(Comparator.comparingInt(setting -> editDistance(given, setting.toString()))).orElse(ROOT);
    }

    /** Levenshtein's: the fewest characters inserted, deleted or replaced to turn one into the other. */
    static int editDistance(String from, String to) {
        int[] previous = new int[to.length() + 1];
        int[] current = new int[to.length() + 1];
        for (int j = 0; j <= to.length(); j++) {
            previous[j] = j;
        }
        for (int i = 1; i <= from.length(); i++) {
            current[0] = i;
            for (int j = 1; j <= to.length(); j++) {
                int replace = previous[j - 1] + (from.charAt(i - 1) == to.charAt(j - 1) ? 0 : 1);
                current[j] = Math.min(replace, Math.min(previous[j], current[j - 1]) + 1);
            }
            int[] swap = previous;
            previous = current;
            current = swap;
        }
        return previous[to.length()];
    }
}
