package io.ringkv.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class TokenFileTest {

    private static final String READER = "r-0123456789abcdef";
    private static final String WRITER = "w-0123456789abcdef";

    @Test
    void readsTokensRolesAndNamesSkippingCommentsAndBlankLines() {
        var grants = TokenFile.parse("""
                # clients of team a

                  %s   read   dashboards
                %s\twrite
                """.formatted(READER, WRITER));
        assertThat(grants).extracting(TokenFile.Grant::token).containsExactly(READER, WRITER);
        assertThat(grants).extracting(TokenFile.Grant::client)
                .containsExactly(new Client("dashboards", Role.READ), new Client("line 4", Role.WRITE));
    }

    @Test
    void refusesTheWholeFileNamingEveryBadLineButNoToken() {
        String secret = "s-0123456789abcdef";
        assertThatThrownBy(() -> TokenFile.parse("""
                %s read ok
                %s reader
                short admin
                %s write
                %s
                %s read a b
                """.formatted(READER, secret, READER, secret, secret)))
                .isInstanceOf(TokenFile.InvalidTokenFileException.class)
                .hasMessageContaining("line 2: unknown role 'reader'")
                .hasMessageContaining("line 3: the token is shorter than 16 characters")
                .hasMessageContaining("line 4: the same token as line 1")
                .hasMessageContaining("line 5: expected 'token role [name]', found 1 fields")
                .hasMessageContaining("line 6: expected 'token role [name]', found 4 fields")
                .message().doesNotContain(secret).doesNotContain(READER);
    }

    @Test
    void aFileWithoutTokensGrantsNone() {
        assertThat(TokenFile.parse("# nothing yet\n\n")).isEmpty();
    }

    @Test
    void aGrantPrintsWithoutItsToken() {
        assertThat(TokenFile.parse(READER + " read").getFirst().toString()).doesNotContain(READER);
    }
}
