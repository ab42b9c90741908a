package io.ringkv.conditional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;

import org.junit.jupiter.api.Test;

import io.ringkv.record.Record;

/** If-Match and If-None-Match as RFC 9110 evaluates them, against a key's current record. */
class PreconditionTest {

    private static final Record CURRENT = Record.value(0x1234, "v".getBytes(StandardCharsets.UTF_8));
    private static final String TAG = EntityTag.of(CURRENT);
    private static final Optional<Record> ABSENT = Optional.empty();
    private static final Optional<Record> DELETED = Optional.of(Record.tombstone(0x2000));

    private static Precondition ifMatch(String value) {
        return Precondition.parse(List.of(value), null);
    }

    private static Precondition ifNoneMatch(String value) {
        return Precondition.parse(null, List.of(value));
    }

    @Test
    void aTagNamesTheTimestampAndTheValue() {
        assertThat(TAG).startsWith("\"1234-").endsWith("\"");
        assertThat(EntityTag.of(Record.value(0x1234, "w".getBytes(StandardCharsets.UTF_8)))).as("same time, other value").isNotEqualTo(TAG);
    }

    @Test
    void ifMatchNeedsTheCurrentValueToCarryATagListed() {
        assertThat(ifMatch(TAG).holds(Optional.of(CURRENT))).isTrue();
        assertThat(ifMatch("\"1-1\", " + TAG).holds(Optional.of(CURRENT))).isTrue();
        assertThat(ifMatch("\"1-1\"").holds(Optional.of(CURRENT))).isFalse();
        assertThat(ifMatch("W/" + TAG).holds(Optional.of(CURRENT))).as("strong comparison").isFalse();
        assertThat(ifMatch("*").holds(Optional.of(CURRENT))).isTrue();
        assertThat(ifMatch("*").holds(ABSENT)).isFalse();
        assertThat(ifMatch("*").holds(DELETED)).isFalse();
    }

    @Test
    void ifNoneMatchStarIsCreateIfAbsent() {
        assertThat(ifNoneMatch("*").holds(ABSENT)).isTrue();
        assertThat(ifNoneMatch("*").holds(DELETED)).isTrue();
        assertThat(ifNoneMatch("*").holds(Optional.of(CURRENT))).isFalse();
        assertThat(ifNoneMatch("W/" + TAG).holds(Optional.of(CURRENT))).as("weak comparison").isFalse();
        assertThat(ifNoneMatch("\"1-1\"").holds(Optional.of(CURRENT))).isTrue();
        assertThat(Precondition.parse(List.of(TAG), List.of("*")).holds(Optional.of(CURRENT))).as("both must hold").isFalse();
        assertThat(Precondition.parse(null, null)).isEqualTo(Precondition.NONE);
        assertThat(Precondition.NONE.holds(ABSENT)).isTrue();
    }

    @Test
    void refusesHeadersThatAreNoListOfTags() {
        for (String bad : List.of("", "abc", "*, \"a\"", "\"unterminated", "\"a b\"", "W/abc", ",")) {
            assertThatThrownBy(() -> ifMatch(bad)).as(bad).isInstanceOf(IllegalArgumentException.class);
        }
        assertThat(Precondition.parse(List.of("\"a\"", "\"b\""), null).ifMatch()).as("a header on two lines").containsExactly("\"a\"", "\"b\"");
    }

    @Test
    void aHeldVersionLaterThanEveryTagProvesAnIfMatchFalse() {
        Record later = Record.value(0x1235, "w".getBytes(StandardCharsets.UTF_8));
        assertThat(ifMatch(TAG).provedFalseBy(later)).isTrue();
        assertThat(ifMatch(TAG).provedFalseBy(Record.tombstone(0x1235))).as("a later delete").isTrue();
        assertThat(ifMatch(TAG).provedFalseBy(CURRENT)).as("the version itself").isFalse();
        assertThat(ifMatch(TAG + ", \"ffff-1\"").provedFalseBy(later)).as("one tag newer than the copy").isFalse();
        assertThat(ifMatch("\"not-a-version\"").provedFalseBy(later)).as("a tag of another form decides nothing").isFalse();
        assertThat(ifMatch("*").provedFalseBy(later)).isFalse();
        assertThat(ifNoneMatch("*").provedFalseBy(later)).as("a copy says nothing sure of presence now").isFalse();
    }
}
