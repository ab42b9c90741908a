package io.ringkv.record;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * The data model stays pure: no framework, no storage engine, no network, no files, and none of
 * the node's other packages, so that every one of those can import it and it never imports them
 * back. A scan of the sources, imports and fully qualified names alike (comments left out).
 */
class RecordPackageIsolationTest {

    private static final Path SOURCES = Path.of("src/main/java/io/ringkv/record");
    private static final Pattern FORBIDDEN = Pattern.compile(
            "\\b(org\\.springframework|org\\.rocksdb|io\\.netty|reactor\\.(core|netty|util)|java\\.io|java\\.nio\\.(file|channels)"
                    + "|io\\.ringkv\\.(?!record\\b)\\w+)\\.");
    private static final Pattern COMMENT = Pattern.compile("/\\*.*?\\*/|//[^\\n]*", Pattern.DOTALL);

    @Test
    void importsNothingButTheJdksPureParts() throws IOException {
        List<String> found = new ArrayList<>();
        int files = 0;
        try (Stream<Path> sources = Files.list(SOURCES)) {
            for (Path source : sources.filter(file -> file.toString().endsWith(".java")).toList()) {
                files++;
                Matcher use = FORBIDDEN.matcher(COMMENT.matcher(Files.readString(source)).replaceAll(""));
                while (use.find()) {
                    found.add(source.getFileName() + ": " + use.group(1));
                }
            }
        }
        assertThat(files).as("sources scanned in %s", SOURCES).isGreaterThanOrEqualTo(6);
        assertThat(found).isEmpty();
    }
}
