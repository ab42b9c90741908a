package io.ringkv.api;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

/**
 * A request's query string, decoded exactly: percent-escapes only, so {@code +} stays a plus, and
 * the decoded bytes must be valid UTF-8. Spring's own query parameters decode as an HTML form does
 * ({@code +} becomes a space) and replace invalid UTF-8 with U+FFFD, so that two different ids
 * would read and write one key. Here anything that is not exact is a 400 that names the parameter.
 */
final class QueryParameters {

    private final Map<String, List<String>> values;

    private QueryParameters(Map<String, List<String>> values) {
        this.values = values;
    }

    /** Parses the raw (still percent-encoded) query; null or empty gives no parameters. */
    static QueryParameters parse(String rawQuery) {
        Map<String, List<String>> values = new HashMap<>();
        if (rawQuery != null && !rawQuery.isEmpty()) {
            for (String pair : rawQuery.split("&", -1)) {
                if (pair.isEmpty()) {
                    continue;
                }
                int equals = pair.indexOf('=');
                String rawName = equals < 0 ? pair : pair.substring(0, equals);
                String name = decode(rawName, "a parameter name");
                String value = equals < 0 ? "" : decode(pair.substring(equals + 1), "'" + name + "'");
                values.computeIfAbsent(name, n -> new ArrayList<>(1)).add(value);
            }
        }
        return new QueryParameters(values);
    }

    /** All values of {@code name}, in order; empty when absent. */
    List<String> all(String name) {
        return values.getOrDefault(name, List.of());
    }

    private static String decode(String raw, String what) {
        if (raw.indexOf('%') < 0 && raw.chars().allMatch(c -> c < 0x80)) {
            return raw; // the common case: plain ASCII, nothing to decode
        }
        var bytes = new ByteArrayOutputStream(raw.length());
        for (int i = 0; i < raw.length(); i++) {
            char c = raw.charAt(i);
            if (c == '%') {
                // HexFormat takes ASCII hex digits only (Character.digit would take '٣' too).
                if (i + 2 >= raw.length() || !HexFormat.isHexDigit(raw.charAt(i + 1)) || !HexFormat.isHexDigit(raw.charAt(i + 2))) {
                    throw new BadRequestException(what + " has a '%' that is not followed by two hex digits (at "
                            + i + "); write a literal '%' as %25");
                }
                bytes.write(HexFormat.fromHexDigits(raw, i + 1, i + 3));
                i += 2;
            } else if (c <= 0xFF) {
                // Reactor Netty reads the request line as ISO-8859-1: a char up to 0xFF is a raw byte
                // the client sent unescaped (valid UTF-8 or not, which is checked below).
                bytes.write(c);
            } else {
                // A server that decoded the request line itself: keep its characters as UTF-8.
                int end = Character.isHighSurrogate(c) && i + 1 < raw.length() ? i + 2 : i + 1;
                bytes.writeBytes(raw.substring(i, end).getBytes(StandardCharsets.UTF_8));
                i = end - 1;
            }
        }
        try {
            return StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes.toByteArray()))
                    .toString();
        } catch (CharacterCodingException notUtf8) {
            throw new BadRequestException(what + " is not valid UTF-8 once its %-escapes are decoded");
        }
    }
}
