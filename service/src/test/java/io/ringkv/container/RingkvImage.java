package io.ringkv.container;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import org.testcontainers.DockerClientFactory;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.model.Image;

/**
 * The application image the container tests run, built once per test JVM from the packaged jar
 * with {@code bin/build-image}.
 *
 * <p>Without a Docker engine the container tests are skipped, except in CI ({@code CI=true}),
 * where they must run and therefore fail.
 */
public final class RingkvImage {

    static final String SKIPPED = "Docker engine not available: container tests skipped (run bin/docker-engine to enable them)";

    /** Images tagged it-* by earlier builds are removed once they are this old (and no container uses them). */
    private static final Duration STALE_AFTER = Duration.ofHours(1);
    private static final Duration BUILD_TIMEOUT = Duration.ofMinutes(10);

    private static String image;
    private static RuntimeException buildFailure;

    private RingkvImage() {
    }

    /**
     * The image reference ({@code ringkv:it-<hash of the jar>}), built on the first call. Aborts
     * the calling test (or class, from {@code @BeforeAll}) when there is no Docker engine, or fails
     * it when {@code CI=true}.
     */
    public static synchronized String name() {
        if (image != null) {
            return image;
        }
        if (buildFailure != null) {
            throw buildFailure;
        }
        requireDocker();
        try {
            image = build();
            return image;
        } catch (RuntimeException e) {
            buildFailure = e;
            throw e;
        }
    }

    static boolean ci() {
        return "true".equalsIgnoreCase(System.getenv("CI"));
    }

    /**
     * Whether a Docker engine answers, found the way the tests will use it (DOCKER_HOST,
     * ~/.testcontainers.properties, the Unix socket, ...); Testcontainers caches the answer. The
     * image Testcontainers itself may run is built first, so that it never pulls one.
     */
    static boolean dockerAvailable() {
        BusyboxImage.ensureBuilt();
        return DockerClientFactory.instance().isDockerAvailable();
    }

    static void requireDocker() {
        if (dockerAvailable()) {
            return;
        }
        if (ci()) {
            Assertions.fail("Docker engine not available, and CI=true: the container tests must run in CI. "
                    + "Start the engine with bin/docker-engine before the build (.ci/run does).");
        }
        System.out.println("[container tests] " + SKIPPED);
        Assumptions.abort(SKIPPED);
    }

    private static String build() {
        Path jar = jar();
        String tag = "it-" + digest(jar);
        String reference = runBuildScript("bin/build-image", Map.of("RINGKV_IMAGE_TAG", tag, "RINGKV_JAR", jar.toString()));
        removeStaleImages(tag);
        return reference;
    }

    /**
     * Runs one of the repository's image-building scripts ({@code bin/build-image},
     * {@code bin/build-k6-image}) from the checkout's root and returns the image reference it
     * prints (its last line on stdout); its progress (stderr) is echoed, and its last lines are in
     * the exception when it fails.
     */
    static String runBuildScript(String script, Map<String, String> environment) {
        Path repository = repositoryRoot();
        String name = Path.of(script).getFileName().toString();
        Instant start = Instant.now();
        List<String> command = List.of(repository.resolve(script).toString());
        Deque<String> progress = new ArrayDeque<>();
        String reference;
        int exit;
        try {
            ProcessBuilder builder = new ProcessBuilder(command).directory(repository.toFile());
            builder.environment().putAll(environment);
            Process process = builder.start();
            process.getOutputStream().close();
            // Progress (stderr) is echoed through System.out: writing to the forked test JVM's
            // own file descriptors would garble the channel to Maven.
            Thread echo = Thread.ofPlatform().daemon().name(name + "-progress").start(() -> {
                try (BufferedReader lines = reader(process.getErrorStream())) {
                    for (String line; (line = lines.readLine()) != null; ) {
                        synchronized (progress) {
                            progress.addLast(line);
                            if (progress.size() > 60) {
                                progress.removeFirst();
                            }
                        }
                        System.out.println("  " + line);
                    }
                } catch (IOException e) {
                    // the process is gone
                }
            });
            try (BufferedReader out = reader(process.getInputStream())) {
                reference = out.lines().reduce((first, second) -> second).orElse("").strip();
            }
            if (!process.waitFor(BUILD_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
                throw new IllegalStateException(script + " did not finish within " + BUILD_TIMEOUT);
            }
            echo.join(5_000);
            exit = process.exitValue();
        } catch (IOException e) {
            throw new UncheckedIOException("could not run " + command, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
        if (exit != 0 || reference.isEmpty()) {
            String tail;
            synchronized (progress) {
                tail = String.join("\n", progress);
            }
            throw new IllegalStateException(script + " failed (exit " + exit + "):\n" + tail);
        }
        System.out.printf("[container tests] image %s built by %s in %.1f s%n",
                reference, script, Duration.between(start, Instant.now()).toMillis() / 1000.0);
        return reference;
    }

    private static Path jar() {
        String property = System.getProperty("ringkv.jar");
        if (property == null || !Files.isRegularFile(Path.of(property))) {
            throw new IllegalStateException("the packaged jar is missing (" + property + "): run these tests with mvn verify");
        }
        return Path.of(property).toAbsolutePath();
    }

    /** The checkout's root: the first directory upwards from the module that holds bin/build-image. */
    static Path repositoryRoot() {
        Path start = Path.of(System.getProperty("basedir", System.getProperty("user.dir"))).toAbsolutePath();
        for (Path dir = start; dir != null; dir = dir.getParent()) {
            if (Files.isExecutable(dir.resolve("bin/build-image"))) {
                return dir;
            }
        }
        throw new IllegalStateException("no bin/build-image in " + start + " or any directory above it");
    }

    /** Twelve hex digits of the jar's SHA-256: the same jar gets the same tag (and a cached build). */
    private static String digest(Path jar) {
        try (DigestInputStream in = new DigestInputStream(Files.newInputStream(jar), MessageDigest.getInstance("SHA-256"))) {
            in.transferTo(OutputStream.nullOutputStream());
            return HexFormat.of().formatHex(in.getMessageDigest().digest()).substring(0, 12);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Every jar gets an image of its own; those of earlier builds are removed once they are old
     * enough that no other test run can be about to use them. Best effort: an image a container
     * still uses is kept (no force).
     */
    private static void removeStaleImages(String currentTag) {
        DockerClient docker = DockerClientFactory.lazyClient();
        long staleBefore = Instant.now().minus(STALE_AFTER).getEpochSecond();
        try {
            for (Image candidate : docker.listImagesCmd().withImageNameFilter("ringkv").exec()) {
                String[] tags = candidate.getRepoTags();
                if (tags == null || candidate.getCreated() == null || candidate.getCreated() > staleBefore) {
                    continue;
                }
                for (String tag : tags) {
                    if (tag.startsWith("ringkv:it-") && !tag.equals("ringkv:" + currentTag)) {
                        try {
                            docker.removeImageCmd(tag).withForce(false).exec();
                            System.out.println("[container tests] removed the stale image " + tag);
                        } catch (RuntimeException e) {
                            // in use, or already gone
                        }
                    }
                }
            }
        } catch (RuntimeException e) {
            System.out.println("[container tests] could not list stale images: " + e);
        }
    }

    private static BufferedReader reader(InputStream in) {
        return new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
    }
}
