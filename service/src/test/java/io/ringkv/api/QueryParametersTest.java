package io.ringkv.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class QueryParametersTest {

    @Test
    void aPlusIsAPlusAndOnlyPercentEscapesAreDecoded() {
        var query = QueryParameters.parse("id=a+b%20c%2Bd&replicas=2/3");
        assertThat(query.all("id")).containsExactly("a+b c+d");
        assertThat(query.all("replicas")).containsExactly("2/3");
        assertThat(QueryParameters.parse("id=%25").all("id")).containsExactly("%");
    }

    @Test
    void decodesMultiByteUtf8AndEscapedNames() {
        assertThat(QueryParameters.parse("%69d=%D0%BA%D0%BB%D1%8E%D1%87").all("id")).containsExactly("ключ");
        assertThat(QueryParameters.parse("id=%F0%9F%94%91").all("id")).containsExactly("\uD83D\uDD11");
    }

    @Test
    void readsUnescapedBytesAsTheClientSentThem() {
        // "ключ" sent as raw UTF-8 bytes, which Reactor Netty hands over one char per byte.
        String raw = new String("ключ".getBytes(StandardCharsets.UTF_8), StandardCharsets.ISO_8859_1);
        assertThat(QueryParameters.parse("id=" + raw).all("id")).containsExactly("ключ");
        assertThatThrownBy(() -> QueryParameters.parse("id=\u00ff")).isInstanceOf(BadRequestException.class);
        assertThat(QueryParameters.parse("id=\uD83D\uDD11").all("id")).containsExactly("\uD83D\uDD11");
    }

    @Test
    void keepsRepeatsEmptiesAndAbsence() {
        var query = QueryParameters.parse("id=a&id=b&flag&empty=&&x=1=2");
        assertThat(query.all("id")).containsExactly("a", "b");
        assertThat(query.all("flag")).containsExactly("");
        assertThat(query.all("empty")).containsExactly("");
        assertThat(query.all("x")).containsExactly("1=2");
        assertThat(query.all("missing")).isEmpty();
        assertThat(QueryParameters.parse(null).all("id")).isEmpty();
        assertThat(QueryParameters.parse("").all("id")).isEmpty();
    }

    /** Each would otherwise alias another id (U+FFFD) or be guessed at. */
    @ParameterizedTest
    @ValueSource(strings = {"id=%FF", "id=a%C3", "id=%E2%82", "id=%C0%AF", "id=%ED%A0%80", "id=%F8%88%80%80%80",
            "id=%", "id=a%4", "id=%ZZ", "id=%\u0663\u0663", "%FF=1"})
    void refusesBadEscapesAndInvalidUtf8(String raw) {
        assertThatThrownBy(() -> QueryParameters.parse(raw))
                .isInstanceOf(BadRequestException.class)
                .satisfies(e -> assertThat(((BadRequestException) e).status().value()).isEqualTo(400));
    }

    @Test
    void namesTheParameterInTheError() {
        assertThatThrownBy(() -> QueryParameters.parse("replicas=2/3&id=%FF"))
                .hasMessageContaining("'id'").hasMessageContaining("UTF-8");
    }
}
