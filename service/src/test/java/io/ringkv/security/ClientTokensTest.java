package io.ringkv.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.ringkv.settings.InvalidSettingException;
import reactor.core.scheduler.Schedulers;

class ClientTokensTest {

    private static final String OLD = "old-0123456789abcdef";
    private static final String NEW = "new-0123456789abcdef";
    private static final Duration GRACE = Duration.ofSeconds(60);

    @TempDir
    Path dir;
    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private final AtomicLong nanos = new AtomicLong();

    @Test
    void aReplacedFileTakesEffectAtTheNextCheck() throws IOException {
        Path file = write("tokens", OLD + " write app\n");
        var tokens = ClientTokens.load(file, GRACE, Schedulers.immediate(), meters);
        assertThat(tokens.find(OLD)).contains(new Client("app", Role.WRITE));

        // As Kubernetes updates a mounted Secret: a new file moved into place.
        Files.move(write("tokens.new", NEW + " read app2\n"), file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        tokens.check();
        assertThat(tokens.find(NEW)).contains(new Client("app2", Role.READ));
        assertThat(tokens.find(OLD)).isEmpty();
    }

    @Test
    void anEmptiedFileRefusesEveryTokenOfTheFile() throws IOException {
        Path file = write("tokens", OLD + " admin\n");
        var tokens = ClientTokens.load(file, GRACE, Schedulers.immediate(), meters);
        RequestCredential own = tokens.issue("warm-up", Role.READ);

        write("tokens", "# every client revoked\n");
        tokens.check();
        assertThat(tokens.find(OLD)).isEmpty();
        assertThat(meters.get("ringkv.security.tokens").gauge().value()).isZero();
        assertThat(meters.get("ringkv.security.tokens.reload.failures").counter().count()).as("an empty file is a valid one").isZero();
        assertThat(tokens.find(own.authorization().orElseThrow().substring("Bearer ".length()))).as("the node's own").isPresent();
    }

    @Test
    void aFileGoneLongerThanTheGraceRefusesEveryTokenUntilItIsBack() throws IOException {
        Path file = write("tokens", OLD + " admin\n");
        var tokens = ClientTokens.load(file, GRACE, Schedulers.immediate(), meters, nanos::get);
        Files.delete(file);

        tokens.check();
        nanos.addAndGet(GRACE.toNanos() - 1);
        tokens.check();
        assertThat(tokens.find(OLD)).as("within the grace").isPresent();

        nanos.incrementAndGet();
        tokens.check();
        assertThat(tokens.find(OLD)).as("after the grace").isEmpty();
        assertThat(meters.get("ringkv.security.tokens").gauge().value()).isZero();

        write("tokens", OLD + " admin\n");
        tokens.check();
        assertThat(tokens.find(OLD)).as("the same file back").isPresent();
        assertThat(meters.get("ringkv.security.tokens").gauge().value()).isOne();
    }

    @Test
    void aBadFileAfterTheGraceKeepsRefusingAndAGoodOneIsTaken() throws IOException {
        Path file = write("tokens", OLD + " admin\n");
        var tokens = ClientTokens.load(file, Duration.ZERO, Schedulers.immediate(), meters, nanos::get);
        Files.delete(file);
        tokens.check();
        assertThat(tokens.find(OLD)).isEmpty();

        write("tokens", OLD + " superuser\n");
        tokens.check();
        assertThat(tokens.find(OLD)).as("a bad file restores nothing").isEmpty();

        write("tokens", NEW + " read\n");
        tokens.check();
        assertThat(tokens.find(NEW)).isPresent();
        assertThat(tokens.find(OLD)).isEmpty();
    }

    @Test
    void aBrokenOrMissingFileKeepsTheTokensInForceAndIsCountedOnce() throws IOException {
        Path file = write("tokens", OLD + " admin\n");
        var tokens = ClientTokens.load(file, GRACE, Schedulers.immediate(), meters);

        write("tokens", OLD + " superuser\n" + NEW + " read\n");
        tokens.check();
        tokens.check();
        assertThat(tokens.find(OLD)).hasValueSatisfying(client -> assertThat(client.role()).isEqualTo(Role.ADMIN));
        assertThat(tokens.find(NEW)).isEmpty();
        assertThat(meters.get("ringkv.security.tokens.reload.failures").counter().count()).isEqualTo(1);

        Files.delete(file);
        tokens.check();
        assertThat(tokens.find(OLD)).isPresent();
        assertThat(meters.get("ringkv.security.tokens.reload.failures").counter().count()).isEqualTo(2);

        // Fixed: used again.
        write("tokens", NEW + " read\n");
        tokens.check();
        assertThat(tokens.find(NEW)).isPresent();
        assertThat(tokens.find(OLD)).isEmpty();
    }

    @Test
    void anIssuedTokenWorksUntilClosedWhateverTheFileSays() throws IOException {
        Path file = write("tokens", OLD + " admin\n");
        var tokens = ClientTokens.load(file, GRACE, Schedulers.immediate(), meters);
        RequestCredential credential = tokens.issue("warm-up", Role.READ);
        String token = credential.authorization().orElseThrow().substring("Bearer ".length());
        assertThat(token).hasSizeGreaterThanOrEqualTo(TokenFile.MIN_TOKEN_LENGTH);
        assertThat(tokens.find(token)).contains(new Client("warm-up", Role.READ));

        write("tokens", NEW + " admin\n");
        tokens.check();
        assertThat(tokens.find(token)).as("after a reload").isPresent();

        credential.close();
        assertThat(tokens.find(token)).isEmpty();
        assertThat(tokens.find(NEW)).isPresent();
        assertThat(tokens.issue("another", Role.READ).authorization()).isNotEqualTo(credential.authorization());
    }

    @Test
    void aNodeDoesNotStartWithoutUsableTokens() throws IOException {
        assertThatThrownBy(() -> ClientTokens.load(null, GRACE, Schedulers.immediate(), meters))
                .isInstanceOf(InvalidSettingException.class)
                .hasMessageStartingWith("Invalid setting ringkv.security.tokens-file: not set");
        assertThatThrownBy(() -> ClientTokens.load(dir.resolve("absent"), GRACE, Schedulers.immediate(), meters))
                .isInstanceOf(InvalidSettingException.class)
                .hasMessageStartingWith("Invalid setting ringkv.security.tokens-file: cannot read");
        Path empty = write("empty", "# to do\n");
        assertThatThrownBy(() -> ClientTokens.load(empty, GRACE, Schedulers.immediate(), meters))
                .isInstanceOf(InvalidSettingException.class)
                .hasMessageContaining("no tokens");
    }

    private Path write(String name, String content) throws IOException {
        return Files.writeString(dir.resolve(name), content);
    }
}
