package io.ringkv.peer.wire;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class MemberNameTest {

    @ParameterizedTest
    @ValueSource(strings = {"http://127.0.0.1:8080", "https://ringkv-0.ringkv-headless.default.svc.cluster.local:8080",
            "http://node-a:1", "http://[::1]:65535", "https://a:443"})
    void membersNamesAreValid(String name) {
        assertThat(MemberName.isValid(name)).isTrue();
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "node-a:1", "ftp://node-a:1", "http://node-a", "http://node-a:0", "http://node-a:65536",
            "http://node-a:1/", "http://node-a:1/path", "http://node=a:1", "http://node-a:1=99", "http://node a:1",
            "http://node-a:1\nhttp://node-b:1=4102444800000", "http://node-a:1\r", "http://node\u0000-a:1",
            "http://user@node-a:1", "http://node-a:1?x", "http://-node:1", "http://node-a:123456", "HTTP://node-a:1",
            "http://node\u200e-a:1", "http://[zz]:1"})
    void anythingElseIsRefused(String name) {
        assertThat(MemberName.isValid(name)).isFalse();
    }

    @Test
    void overlongNamesAreRefused() {
        String host = "a".repeat(MemberName.MAX_LENGTH);
        assertThat(MemberName.isValid("http://" + host + ":1")).isFalse();
        assertThat(MemberName.isValid(null)).isFalse();
    }

    @Test
    void logsShowNoControlCharacterAndAreBounded() {
        assertThat(MemberName.forLog("http://a:1\nforged line")).isEqualTo("http://a:1\\u000aforged line").doesNotContain("\n");
        assertThat(MemberName.forLog("x".repeat(10_000))).hasSize(MemberName.MAX_LENGTH + 3);
    }
}
