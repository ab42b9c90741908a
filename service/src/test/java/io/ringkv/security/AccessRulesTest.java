package io.ringkv.security;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Optional;

import org.junit.jupiter.api.Test;

import io.ringkv.security.AccessRules.Access;

class AccessRulesTest {

    private static final Optional<Client> READER = Optional.of(new Client("r", Role.READ));
    private static final Optional<Client> WRITER = Optional.of(new Client("w", Role.WRITE));
    private static final Optional<Client> ADMIN = Optional.of(new Client("a", Role.ADMIN));

    @Test
    void rolesAreCumulative() {
        assertThat(Role.ADMIN.includes(Role.WRITE)).isTrue();
        assertThat(Role.ADMIN.includes(Role.READ)).isTrue();
        assertThat(Role.WRITE.includes(Role.READ)).isTrue();
        assertThat(Role.WRITE.includes(Role.ADMIN)).isFalse();
        assertThat(Role.READ.includes(Role.WRITE)).isFalse();
        assertThat(Role.READ.includes(Role.READ)).isTrue();
    }

    @Test
    void decidesByMethodAndPath() {
        assertThat(AccessRules.required("GET", "/v0/entity")).isEqualTo(Access.READ);
        assertThat(AccessRules.required("HEAD", "/v0/entity")).isEqualTo(Access.READ);
        assertThat(AccessRules.required("PUT", "/v0/entity")).isEqualTo(Access.WRITE);
        assertThat(AccessRules.required("DELETE", "/v0/entity")).isEqualTo(Access.WRITE);
        assertThat(AccessRules.required("GET", "/v0/cluster")).isEqualTo(Access.ADMIN);
        assertThat(AccessRules.required("GET", "/v0/status")).isEqualTo(Access.OPEN);
        assertThat(AccessRules.required("GET", "/v0/cluster/self")).isEqualTo(Access.OPEN);
        assertThat(AccessRules.required("GET", "/actuator/health/readiness")).isEqualTo(Access.OPEN);
        assertThat(AccessRules.required("GET", "/actuator/health/storage")).isEqualTo(Access.READ);
        assertThat(AccessRules.required("POST", "/actuator/repair")).isEqualTo(Access.ADMIN);
    }

    /** What no rule names is closed to everyone, including spellings of a path that are not its own. */
    @Test
    void deniesWhatNoRuleNames() {
        for (String path : new String[] {"/v0/entity/", "/v0/%65ntity", "/v0/entity;x=1", "/actuator/env",
                "/actuator/heapdump", "/actuator/health/", "/actuator/healthy", "/", "/v1/entity"}) {
            assertThat(AccessRules.required("GET", path)).as(path).isEqualTo(Access.DENIED);
            assertThat(AccessRules.allows(AccessRules.required("GET", path), ADMIN)).as(path).isFalse();
        }
        assertThat(AccessRules.required("POST", "/actuator/health/liveness")).isEqualTo(Access.DENIED);
    }

    @Test
    void allowsByRole() {
        assertThat(AccessRules.allows(Access.OPEN, Optional.empty())).isTrue();
        assertThat(AccessRules.allows(Access.READ, Optional.empty())).isFalse();
        assertThat(AccessRules.allows(Access.READ, READER)).isTrue();
        assertThat(AccessRules.allows(Access.WRITE, READER)).isFalse();
        assertThat(AccessRules.allows(Access.WRITE, WRITER)).isTrue();
        assertThat(AccessRules.allows(Access.ADMIN, WRITER)).isFalse();
        assertThat(AccessRules.allows(Access.ADMIN, ADMIN)).isTrue();
        assertThat(AccessRules.allows(Access.DENIED, ADMIN)).isFalse();
    }
}
