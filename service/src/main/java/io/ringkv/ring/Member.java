package io.ringkv.ring;

import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * A member of the cluster: its name on the ring (its URL, stable across restarts) and what it
 * tells about itself besides, its attributes, such as the zone it runs in. The ring places a
 * member's points by its name alone; of its attributes, only the zone moves data, and only
 * through placement: the ring spreads a key's replicas across zones ({@link HashRing}).
 *
 * <p>Attributes travel between nodes (in PING, {@code peer.message.Ping}), so they are bounded and
 * of one plain form, a Kubernetes label value's: a node refuses a setting outside it, and drops
 * attributes outside it that a peer tells.
 *
 * @param attributes what the member told about itself; empty for one that has not told (yet), or
 *                   runs a version that tells nothing, or has none set
 */
public record Member(String name, Map<String, String> attributes) {

    /** The zone a member runs in ({@code ringkv.cluster.zone}): what the ring spreads a key's replicas across. */
    public static final String ZONE = "zone";

    /**
     * The newest binary form of records the member reads ({@code record.RecordCodec}); a member
     * that does not tell reads the first only. A form is written only once every member reads it:
     * a value that expires reached an older replica as a record it refused.
     */
    public static final String RECORD_FORMAT = "record-format";

    /** At most this many attributes, each key and value at most {@link #MAX_TEXT_LENGTH} characters. */
    public static final int MAX_ATTRIBUTES = 16;
    public static final int MAX_TEXT_LENGTH = 63;

    /** What {@link #validText} takes, in words, for the messages that refuse a text. */
    public static final String TEXT_FORM = "a Kubernetes label value (letters, digits, '-', '_' and '.', beginning and ending"
            + " with a letter or digit, at most " + MAX_TEXT_LENGTH + " characters)";

    /** A Kubernetes label value: what a zone is named by (topology.kubernetes.io/zone) and safe in logs and JSON. */
    private static final Pattern TEXT = Pattern.compile("[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?");

    public Member {
        if (name == null || name.isEmpty()) {
            throw new IllegalArgumentException("a member needs a name");
        }
        if (!validAttributes(attributes)) {
            throw new IllegalArgumentException("attributes must be at most " + MAX_ATTRIBUTES + " keys and values of the form "
                    + TEXT + ", at most " + MAX_TEXT_LENGTH + " characters each; got " + attributes);
        }
        attributes = Map.copyOf(attributes);
    }

    /** A member known by its name only, before it told anything about itself. */
    public static Member named(String name) {
        return new Member(name, Map.of());
    }

    /** Members known by their names only (a static peer list's), in the same order. */
    public static List<Member> named(Collection<String> names) {
        return names.stream().map(Member::named).toList();
    }

    /** A member in a zone; an empty zone is none. */
    public static Member inZone(String name, String zone) {
        return new Member(name, zone.isEmpty() ? Map.of() : Map.of(ZONE, zone));
    }

    /** The same member in that zone, its other attributes kept. */
    public Member withZone(String zone) {
        return with(ZONE, zone);
    }

    /** The same member with one attribute more (or changed). */
    public Member with(String attribute, String value) {
        Map<String, String> attributes = new HashMap<>(this.attributes);
        attributes.put(attribute, value);
        return new Member(name, attributes);
    }

    /** The same member without a zone, its other attributes kept. */
    public Member withoutZone() {
        Map<String, String> attributes = new HashMap<>(this.attributes);
        attributes.remove(ZONE);
        return new Member(name, attributes);
    }

    /** The newest record format it told it reads ({@link #RECORD_FORMAT}); 1 for one that told none, or nonsense. */
    public int recordFormat() {
        String told = attributes.get(RECORD_FORMAT);
        return told != null && told.matches("[1-9][0-9]{0,8}") ? Integer.parseInt(told) : 1;
    }

    /** The zone it told, if any. */
    public Optional<String> zone() {
        return Optional.ofNullable(attributes.get(ZONE));
    }

    /** Whether a text can be an attribute's key or value. */
    public static boolean validText(String text) {
        return text != null && text.length() <= MAX_TEXT_LENGTH && TEXT.matcher(text).matches();
    }

    /** Whether attributes are within the bounds and of the form a member's take. */
    public static boolean validAttributes(Map<String, String> attributes) {
        return attributes != null && attributes.size() <= MAX_ATTRIBUTES
                && attributes.entrySet().stream().allMatch(entry -> validText(entry.getKey()) && validText(entry.getValue()));
    }
}
