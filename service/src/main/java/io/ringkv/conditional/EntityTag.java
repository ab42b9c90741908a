package io.ringkv.conditional;

import java.util.OptionalLong;
import java.util.zip.CRC32C;

import io.ringkv.record.Record;

/**
 * The entity tag (RFC 9110, section 8.8.3) that names a version of a key: its timestamp and a
 * checksum of its value, both in hex, quoted. The timestamp alone does not name a version: two
 * coordinators can stamp the same hybrid-clock reading on different values. A strong tag: equal
 * tags mean the same bytes, as far as a 32-bit checksum of equal-timestamped values can tell.
 */
public final class EntityTag {

    private EntityTag() {
    }

    /** The tag of a live record (a tombstone is no representation and has none). */
    public static String of(Record record) {
        CRC32C checksum = new CRC32C();
        checksum.update(record.valueBuffer());
        return "\"" + Long.toHexString(record.timestamp()) + "-" + Long.toHexString(checksum.getValue()) + "\"";
    }

    /** The timestamp a strong tag of this form names; empty for any other tag. */
    static OptionalLong timestamp(String tag) {
        int dash = tag.indexOf('-');
        if (!tag.startsWith("\"") || dash < 2 || dash - 1 > 16) {
            return OptionalLong.empty();
        }
        try {
            return OptionalLong.of(Long.parseUnsignedLong(tag.substring(1, dash), 16));
        } catch (NumberFormatException e) {
            return OptionalLong.empty();
        }
    }
}
