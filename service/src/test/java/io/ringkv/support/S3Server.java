package io.ringkv.support;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * A real S3-compatible server for the backup tests: SeaweedFS's S3 gateway, started by
 * {@code bin/s3-server} (which builds it with Go the first time: a few minutes) on loopback, with
 * its data in a directory of the test's. Without a server to run, the tests that need one are
 * skipped, except in CI ({@code CI=true}), where they must run and therefore fail. Never a mock.
 */
public final class S3Server implements AutoCloseable {

    public static final String ACCESS_KEY = "ringkv";
    public static final String SECRET_KEY = "ringkv-secret";
    public static final String REGION = "us-east-1";
    private static final Duration BUILD_TIMEOUT = Duration.ofMinutes(30);
    private static final Duration START_TIMEOUT = Duration.ofMinutes(2);

    private final Path launcher;
    private final Path dir;
    private final URI endpoint;
    private final Thread stopAtExit;

    private S3Server(Path launcher, Path dir, URI endpoint) {
        this.launcher = launcher;
        this.dir = dir;
        this.endpoint = endpoint;
        this.stopAtExit = new Thread(this::stop, "s3-server-stop");
        Runtime.getRuntime().addShutdownHook(stopAtExit);
    }

    /** Starts a server with its data in {@code dir}; skips the test (fails it in CI) when there is none to run. */
    public static S3Server start(Path dir) {
        Path launcher = repositoryRoot().resolve("bin/s3-server");
        requireWeed(launcher);
        int port = TestPorts.consecutive(8);
        return new S3Server(launcher, dir, URI.create(run(START_TIMEOUT, launcher.toString(), "start", dir.toString(), Integer.toString(port))));
    }

    public URI endpoint() {
        return endpoint;
    }

    /** The server's credentials as a node's environment gives them to the AWS SDK. */
    public Map<String, String> credentials() {
        return Map.of("AWS_ACCESS_KEY_ID", ACCESS_KEY, "AWS_SECRET_ACCESS_KEY", SECRET_KEY);
    }

    /** A client of this server with its credentials, for what the tests do beside the nodes (making buckets). */
    public S3Client client() {
        return S3Client.builder()
                .endpointOverride(endpoint)
                .forcePathStyle(true)
                .region(Region.of(REGION))
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(ACCESS_KEY, SECRET_KEY)))
                .httpClient(UrlConnectionHttpClient.create())
                .build();
    }

    public void createBucket(String bucket) {
        try (S3Client s3 = client()) {
            s3.createBucket(request -> request.bucket(bucket));
        }
    }

    @Override
    public void close() {
        Runtime.getRuntime().removeShutdownHook(stopAtExit);
        stop();
    }

    /**
     * Killed after a second: a put whose content ended early leaves its connection open (the SDK
     * does not close it), weed's shutdown would wait 15 s for the request on it, and the data is
     * thrown away anyway.
     */
    private void stop() {
        try {
            run(Duration.ofSeconds(30), "env", "S3_SERVER_STOP_GRACE=1", launcher.toString(), "stop", dir.toString());
        } catch (RuntimeException e) {
            System.out.println("[s3-server] " + e.getMessage());
        }
    }

    /**
     * Fails in CI, and skips the test elsewhere, when there is no weed and none can be built. A
     * weed that is there but does not start fails the tests anywhere: that is a fault of ours.
     */
    private static void requireWeed(Path launcher) {
        try {
            run(BUILD_TIMEOUT, launcher.toString(), "path");
        } catch (RuntimeException e) {
            String reason = "no S3-compatible server: bin/s3-server path failed: " + e.getMessage();
            if ("true".equalsIgnoreCase(System.getenv("CI"))) {
                Assertions.fail(reason + "\nCI=true: the S3 tests must run in CI (they need Go, or WEED=<a weed binary>).");
            }
            System.out.println("[s3-server] " + reason);
            Assumptions.abort(reason);
        }
    }

    /**
     * Runs the launcher and returns the last line it printed; its progress (stderr) is echoed
     * through System.out, and its last lines are in the exception when it fails.
     */
    private static String run(Duration timeout, String... command) {
        Deque<String> progress = new ArrayDeque<>();
        try {
            Process process = new ProcessBuilder(command).start();
            process.getOutputStream().close();
            Thread echo = Thread.ofPlatform().daemon().name("s3-server-progress").start(() -> {
                try (BufferedReader lines = reader(process.getErrorStream())) {
                    for (String line; (line = lines.readLine()) != null; ) {
                        synchronized (progress) {
                            progress.addLast(line);
                            if (progress.size() > 40) {
                                progress.removeFirst();
                            }
                        }
                        System.out.println("  " + line);
                    }
                } catch (IOException e) {
                    // the process is gone
                }
            });
            List<String> out;
            try (BufferedReader lines = reader(process.getInputStream())) {
                out = new ArrayList<>(lines.lines().toList());
            }
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
                throw new IllegalStateException(String.join(" ", command) + " did not finish within " + timeout);
            }
            echo.join(5_000);
            if (process.exitValue() != 0) {
                synchronized (progress) {
                    throw new IllegalStateException(String.join(" ", command) + " failed (exit " + process.exitValue() + "):\n"
                            + String.join("\n", progress));
                }
            }
            return out.isEmpty() ? "" : out.getLast().strip();
        } catch (IOException e) {
            throw new IllegalStateException("could not run " + String.join(" ", command) + ": " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static BufferedReader reader(InputStream in) {
        return new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
    }

    /** The checkout's root: the first directory upwards from the module that holds bin/s3-server. */
    private static Path repositoryRoot() {
        Path start = Path.of(System.getProperty("basedir", System.getProperty("user.dir"))).toAbsolutePath();
        for (Path dir = start; dir != null; dir = dir.getParent()) {
            if (Files.isExecutable(dir.resolve("bin/s3-server"))) {
                return dir;
            }
        }
        throw new IllegalStateException("no bin/s3-server in " + start + " or any directory above it");
    }
}
