package io.ringkv;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * No package of the node imports a package that imports it back, directly or around a circle:
 * each capability can then be read, tested and changed from its own package down. A scan of the
 * main sources (imports and fully qualified names, comments left out) into the graph of packages,
 * whose strongly connected components (Tarjan) must all be single packages.
 */
class PackageCyclesTest {

    private static final Path SOURCES = Path.of("src/main/java/io/ringkv");
    private static final Pattern PACKAGE = Pattern.compile("^package ([\\w.]+);", Pattern.MULTILINE);
    /** A use of another of the node's packages: the lower-case segments before a class name. */
    private static final Pattern USE = Pattern.compile("\\b(io\\.ringkv(?:\\.[a-z]\\w*)*)\\.[A-Z]");
    private static final Pattern COMMENT = Pattern.compile("/\\*.*?\\*/|//[^\\n]*", Pattern.DOTALL);

    @Test
    void noPackageImportsOneThatImportsItBack() throws IOException {
        Map<String, Set<String>> uses = uses();
        assertThat(uses).as("packages scanned in %s", SOURCES).hasSizeGreaterThan(15);

        List<String> cycles = new ArrayList<>();
        for (Set<String> component : new StronglyConnected(uses).components()) {
            if (component.size() > 1) {
                StringBuilder cycle = new StringBuilder(String.join(", ", component) + ":");
                for (String from : component) {
                    for (String to : uses.get(from)) {
                        if (component.contains(to)) {
                            cycle.append("\n    ").append(from).append(" -> ").append(to);
                        }
                    }
                }
                cycles.add(cycle.toString());
            }
        }
        assertThat(cycles).as("packages in a cycle, and the imports that make it").isEmpty();
    }

    @Test
    void findsACycleWhereThereIsOne() {
        Map<String, Set<String>> uses = Map.of("a", Set.of("b"), "b", Set.of("c"), "c", Set.of("a"), "d", Set.of("a"));
        assertThat(new StronglyConnected(uses).components()).contains(new TreeSet<>(Set.of("a", "b", "c")), Set.of("d"));
    }

    private static Map<String, Set<String>> uses() throws IOException {
        Map<String, Set<String>> uses = new TreeMap<>();
        try (Stream<Path> files = Files.walk(SOURCES)) {
            for (Path source : files.filter(file -> file.toString().endsWith(".java")).toList()) {
                String code = COMMENT.matcher(Files.readString(source)).replaceAll("");
                Matcher declared = PACKAGE.matcher(code);
                assertThat(declared.find()).as("package of %s", source).isTrue();
                String from = declared.group(1);
                Set<String> used = uses.computeIfAbsent(from, ignored -> new TreeSet<>());
                Matcher use = USE.matcher(code.substring(declared.end()));
                while (use.find()) {
                    if (!use.group(1).equals(from)) {
                        used.add(use.group(1));
                    }
                }
            }
        }
        uses.values().forEach(used -> used.retainAll(uses.keySet()));
        return uses;
    }

    /** Tarjan's algorithm: each component a set of packages that all reach one another. */
    private static final class StronglyConnected {
        private final Map<String, Set<String>> graph;
        private final Map<String, Integer> index = new HashMap<>();
        private final Map<String, Integer> low = new HashMap<>();
        private final Deque<String> stack = new ArrayDeque<>();
        private final List<Set<String>> components = new ArrayList<>();

        StronglyConnected(Map<String, Set<String>> graph) {
            this.graph = graph;
        }

        List<Set<String>> components() {
            new TreeSet<>(graph.keySet()).forEach(node -> {
                if (!index.containsKey(node)) {
                    visit(node);
                }
            });
            return components;
        }

        private void visit(String node) {
            index.put(node, index.size());
            low.put(node, index.get(node));
            stack.push(node);
            for (String next : graph.getOrDefault(node, Set.of())) {
                if (!index.containsKey(next)) {
                    visit(next);
                    low.put(node, Math.min(low.get(node), low.get(next)));
                } else if (stack.contains(next)) {
                    low.put(node, Math.min(low.get(node), index.get(next)));
                }
            }
            if (low.get(node).equals(index.get(node))) {
                Set<String> component = new TreeSet<>();
                String member;
                do {
                    member = stack.pop();
                    component.add(member);
                } while (!member.equals(node));
                components.add(component);
            }
        }
    }
}
