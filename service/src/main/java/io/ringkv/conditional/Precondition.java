package io.ringkv.conditional;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import io.ringkv.record.Record;

/**
 * A request's condition on the key's current version, from its {@code If-Match} and
 * {@code If-None-Match} headers, evaluated as RFC 9110 section 13.2.2 orders them: If-Match
 * first (strong comparison: a weak tag never matches), then If-None-Match (weak comparison). A
 * tombstone, an expired value, or no record, is no current representation: it matches no tag, and
 * not {@code *} (the caller passes only a live value).
 * Plain Java.
 *
 * @param ifMatch     null without the header; else {@code ["*"]} or the tags listed
 * @param ifNoneMatch likewise
 */
public record Precondition(List<String> ifMatch, List<String> ifNoneMatch) {

    /** No condition: a write under consensus that applies whatever the current version. */
    public static final Precondition NONE = new Precondition(null, null);
    private static final String ANY = "*";

    public boolean isNone() {
        return ifMatch == null && ifNoneMatch == null;
    }

    /**
     * The condition of the headers' values (each header may come on several lines), or
     * {@link #NONE} for neither.
     *
     * @throws IllegalArgumentException for a header that is not {@code *} or a list of entity tags
     */
    public static Precondition parse(List<String> ifMatch, List<String> ifNoneMatch) {
        return new Precondition(tags("If-Match", ifMatch), tags("If-None-Match", ifNoneMatch));
    }

    /** Whether the condition holds for the key's current record (a tombstone and empty are absent). */
    public boolean holds(Optional<Record> current) {
        Optional<String> tag = current.filter(record -> !record.tombstone()).map(EntityTag::of);
        if (ifMatch != null) {
            boolean matches = tag.isPresent() && (ifMatch.contains(ANY) || ifMatch.contains(tag.get()));
            if (!matches) {
                return false;
            }
        }
        if (ifNoneMatch != null) {
            boolean matches = tag.isPresent() && (ifNoneMatch.contains(ANY) || ifNoneMatch.stream().map(Precondition::opaque)
                    .anyMatch(opaque -> opaque.equals(tag.get())));
            return !matches;
        }
        return true;
    }

    /**
     * Whether a version some replica holds proves the condition false without a round of
     * consensus: every tag of an If-Match is older than it. A held version was chosen, and later
     * ones have later timestamps, so from the moment it was read the key's version is none of
     * those tags, and the failure is linearizable at that moment (docs/design.md). Only for
     * If-Match with tags: a value held says nothing sure about the key being present now (a
     * delete may have been chosen since), nor an old tag about a newer version.
     */
    public boolean provedFalseBy(Record held) {
        if (ifMatch == null || ifMatch.contains(ANY)) {
            return false;
        }
        return ifMatch.stream().allMatch(tag -> EntityTag.timestamp(tag).stream().anyMatch(time -> time < held.timestamp()));
    }

    /** A tag without its weakness prefix: If-None-Match compares weakly. */
    private static String opaque(String tag) {
        return tag.startsWith("W/") ? tag.substring(2) : tag;
    }

    private static List<String> tags(String header, List<String> lines) {
        if (lines == null || lines.isEmpty()) {
            return null;
        }
        String value = String.join(",", lines).strip();
        if (value.equals(ANY)) {
            return List.of(ANY);
        }
        List<String> tags = new ArrayList<>();
        int at = 0;
        while (at < value.length()) {
            char c = value.charAt(at);
            if (c == ',' || c == ' ' || c == '\t') {
                at++;
                continue;
            }
            int start = at;
            if (value.startsWith("W/", at)) {
                at += 2;
            }
            if (at >= value.length() || value.charAt(at) != '"') {
                throw new IllegalArgumentException(header + " must be * or a list of quoted entity tags, like \"5f1e2a3b-9c\"");
            }
            int end = value.indexOf('"', at + 1);
            if (end < 0) {
                throw new IllegalArgumentException(header + " has an entity tag without its closing quote");
            }
            String tag = value.substring(start, end + 1);
            for (int i = start; i < tag.length() + start; i++) {
                char tc = value.charAt(i);
                if (tc < 0x21 || tc == 0x7f) {
                    throw new IllegalArgumentException(header + " has a control character or a space inside an entity tag");
                }
            }
            tags.add(tag);
            at = end + 1;
        }
        if (tags.isEmpty()) {
            throw new IllegalArgumentException(header + " is empty; give * or an entity tag");
        }
        return List.copyOf(tags);
    }
}
