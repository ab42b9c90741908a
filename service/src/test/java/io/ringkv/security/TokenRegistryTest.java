package io.ringkv.security;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Collection;

import org.junit.jupiter.api.Test;

class TokenRegistryTest {

    private static final String READER = "r-0123456789abcdef";
    private static final String ADMIN = "a-0123456789abcdef";
    private final TokenRegistry registry = TokenRegistry.of(TokenFile.parse(READER + " read reader\n" + ADMIN + " admin ops\n"));

    @Test
    void findsTheClientOfAKnownTokenOnly() {
        assertThat(registry.find(READER)).contains(new Client("reader", Role.READ));
        assertThat(registry.find(ADMIN)).contains(new Client("ops", Role.ADMIN));
        // A prefix, an extension, another case: unknown, however close.
        assertThat(registry.find("r-0123456789abcde")).isEmpty();
        assertThat(registry.find(READER + "0")).isEmpty();
        assertThat(registry.find(READER.toUpperCase())).isEmpty();
        assertThat(registry.find("")).isEmpty();
    }

    /** The registry holds hashes only: nothing reachable from it is the token, in any form. */
    @Test
    void keepsNoTokenInMemory() throws IllegalAccessException {
        var field = java.util.Arrays.stream(TokenRegistry.class.getDeclaredFields())
                .filter(f -> f.getName().equals("known")).findFirst().orElseThrow();
        field.setAccessible(true);
        String held = String.valueOf(field.get(registry)) + deepBytes((Collection<?>) field.get(registry));
        assertThat(held).doesNotContain(READER).doesNotContain(ADMIN);
    }

    private static String deepBytes(Collection<?> entries) throws IllegalAccessException {
        var text = new StringBuilder();
        for (Object entry : entries) {
            for (var component : entry.getClass().getRecordComponents()) {
                try {
                    Object value = component.getAccessor().invoke(entry);
                    text.append(value instanceof byte[] bytes ? new String(bytes, java.nio.charset.StandardCharsets.ISO_8859_1) : value);
                } catch (ReflectiveOperationException e) {
                    throw new IllegalAccessException(e.toString());
                }
            }
        }
        return text.toString();
    }
}
