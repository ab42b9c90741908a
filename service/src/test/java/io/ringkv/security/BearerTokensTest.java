package io.ringkv.security;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class BearerTokensTest {

    @Test
    void findsATokenParameterAnywhereInTheQuery() {
        assertThat(BearerTokens.carriesToken("access_token=abc")).isTrue();
        assertThat(BearerTokens.carriesToken("id=k&token=abc")).isTrue();
        assertThat(BearerTokens.carriesToken("id=k&token")).as("a name without a value").isTrue();
        assertThat(BearerTokens.carriesToken("id=k&access%5Ftoken=abc")).as("an encoded name").isTrue();
        assertThat(BearerTokens.carriesToken("%74oken=abc&id=k")).isTrue();
    }

    @Test
    void otherQueriesCarryNone() {
        assertThat(BearerTokens.carriesToken(null)).isFalse();
        assertThat(BearerTokens.carriesToken("")).isFalse();
        assertThat(BearerTokens.carriesToken("id=token")).as("a value that reads 'token'").isFalse();
        assertThat(BearerTokens.carriesToken("id=k&replicas=2/3")).isFalse();
        assertThat(BearerTokens.carriesToken("tokens=1&my_token=2")).isFalse();
        assertThat(BearerTokens.carriesToken("id=%zz&to%ken=1")).as("a broken encoding").isFalse();
    }
}
