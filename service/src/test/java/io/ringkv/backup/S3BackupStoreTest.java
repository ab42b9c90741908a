package io.ringkv.backup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.ringkv.support.S3Server;


/**
 * The S3 store against a real S3-compatible server: SeaweedFS, started by {@code bin/s3-server}
 * (which builds it with Go the first time: a few minutes). Without a server to run the tests are
 * skipped, except in CI ({@code CI=true}), where they must run and therefore fail.
 */
class S3BackupStoreTest extends BackupStoreContract {

    private static final String BUCKET = "ringkv-backups";
    private static final int PAGE = 7;
    private static final AtomicInteger TESTS = new AtomicInteger();

    @TempDir
    static Path serverDir;

    private static S3Server server;
    private static URI endpoint;
    private static boolean credentialsSet;
    private static String accessKeyBefore;
    private static String secretKeyBefore;

    /** Each test's objects are under a prefix of their own, in the one bucket. */
    private final String test = "test-" + TESTS.incrementAndGet();

    @BeforeAll
    static void startServer() {
        server = S3Server.start(serverDir);
        endpoint = server.endpoint();
        server.createBucket(BUCKET);
        // The store takes its credentials where the SDK looks for them, system properties first.
        accessKeyBefore = System.setProperty("aws.accessKeyId", S3Server.ACCESS_KEY);
        secretKeyBefore = System.setProperty("aws.secretAccessKey", S3Server.SECRET_KEY);
        credentialsSet = true;
    }

    @AfterAll
    static void stopServerAndRestore() {
        if (server != null) {
            server.close();
        }
        if (credentialsSet) {
            restore("aws.accessKeyId", accessKeyBefore);
            restore("aws.secretAccessKey", secretKeyBefore);
        }
    }

    private static void restore(String property, String value) {
        if (value == null) {
            System.clearProperty(property);
        } else {
            System.setProperty(property, value);
        }
    }

    @Override
    BackupStore open(String location) {
        return S3BackupStore.open(URI.create("s3://" + BUCKET + "/" + test + "/" + location), endpoint, S3Server.REGION, PAGE);
    }

    @Override
    int pageSize() {
        return PAGE;
    }

    @Test
    void describesWhereWithoutCredentials() throws IOException {
        BackupStore store = store("described");
        assertThat(store.describe()).isEqualTo("s3://" + BUCKET + "/" + test + "/described (endpoint " + endpoint + ")");

        URI withSecret = URI.create("http://ringkv:ringkv-secret@127.0.0.1:" + endpoint.getPort());
        try (BackupStore other = S3BackupStore.open(URI.create("s3://" + BUCKET + "/"), withSecret, S3Server.REGION)) {
            assertThat(other.describe()).isEqualTo("s3://" + BUCKET + " (endpoint " + endpoint + ")");
        }
    }

    @Test
    void rejectsATargetThatIsNotABucket() {
        for (String target : List.of("http://bucket/x", "s3:///x", "s3://bucket:9000/x", "s3://bucket/a//b", "s3://bucket/x?versionId=1")) {
            assertThatThrownBy(() -> S3BackupStore.open(URI.create(target), endpoint, S3Server.REGION)).as(target)
                    .isInstanceOf(IllegalArgumentException.class);
        }
        assertThatThrownBy(() -> S3BackupStore.open(URI.create("s3://key:secret@bucket/x"), endpoint, S3Server.REGION))
                .isInstanceOf(IllegalArgumentException.class).hasMessageNotContaining("secret");
    }

    @Test
    void namesTheObjectWhenTheServerRefuses() throws IOException {
        try (BackupStore store = S3BackupStore.open(URI.create("s3://no-such-bucket/p"), endpoint, S3Server.REGION)) {
            assertThatThrownBy(() -> store.putBytes("x", bytes("x"))).isInstanceOf(IOException.class)
                    .hasMessageContaining("PutObject s3://no-such-bucket/p/x (endpoint " + endpoint + ") failed");
            assertThatThrownBy(() -> store.getBytes("x")).as("no bucket is not no object").isInstanceOf(IOException.class)
                    .hasMessageContaining("GetObject s3://no-such-bucket/p/x (endpoint " + endpoint + ") failed");
        }
    }
}
