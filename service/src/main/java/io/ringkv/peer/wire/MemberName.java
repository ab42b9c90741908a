package io.ringkv.peer.wire;

import java.util.regex.Pattern;

/**
 * Whether a name a peer gives itself in the handshake can be a member's name on a ring:
 * {@code http://host:port} or {@code https://host:port}, the only form a node's name takes
 * ({@code ringkv.cluster.self}, reduced to scheme, host and port). A name is checked before it
 * is logged, compared or stored anywhere (the repair ledger keeps names one per line), so one
 * with a control character, a space, an {@code =} or anything past the port is refused.
 */
public final class MemberName {

    /** Longer than any DNS name (253) with a scheme and a port. */
    public static final int MAX_LENGTH = 300;

    /** A DNS name or IPv4 address, or an IPv6 address in brackets; then a port of 1 to 5 digits. */
    private static final Pattern FORM = Pattern.compile(
            "https?://([A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?|\\[[0-9A-Fa-f:.]+\\]):([0-9]{1,5})");

    private MemberName() {
    }

    /** Whether the name can be a member's: a bounded {@code http(s)://host:port} with a port in 1..65535. */
    public static boolean isValid(String name) {
        if (name == null || name.length() > MAX_LENGTH) {
            return false;
        }
        var match = FORM.matcher(name);
        if (!match.matches()) {
            return false;
        }
        int port = Integer.parseInt(match.group(2));
        return port >= 1 && port <= 65_535;
    }

    /** The name made safe to log whatever it holds: control characters escaped, cut at {@link #MAX_LENGTH}. */
    public static String forLog(String name) {
        StringBuilder safe = new StringBuilder();
        name.codePoints().limit(MAX_LENGTH).forEach(c -> {
            if (Character.isISOControl(c) || Character.getType(c) == Character.FORMAT) {
                safe.append(String.format("\\u%04x", c));
            } else {
                safe.appendCodePoint(c);
            }
        });
        return name.codePointCount(0, name.length()) > MAX_LENGTH ? safe + "..." : safe.toString();
    }
}
