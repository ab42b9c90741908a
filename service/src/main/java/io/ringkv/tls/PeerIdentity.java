package io.ringkv.tls;

import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Who a peer is, by its certificate: the hosts among its subject alternative names (DNS names
 * and IP addresses; never the subject's common name, which TLS clients stopped trusting), and
 * whether one of them is the host of a member this node placed on its ring. A certificate the
 * CA signed for some other service gets nothing on the cluster port.
 */
public final class PeerIdentity {

    /** The subject alternative name types RFC 5280 gives DNS names and IP addresses. */
    private static final int DNS_NAME = 2;
    private static final int IP_ADDRESS = 7;

    private PeerIdentity() {
    }

    /** The DNS names and IP addresses the certificate is for, in the form {@link #hostOf} gives. */
    public static Set<String> hosts(X509Certificate certificate) {
        Collection<List<?>> names;
        try {
            names = certificate.getSubjectAlternativeNames();
        } catch (CertificateParsingException e) {
            return Set.of();
        }
        Set<String> hosts = new LinkedHashSet<>();
        if (names != null) {
            for (List<?> name : names) {
                if (name.size() >= 2 && name.get(0) instanceof Integer type && (type == DNS_NAME || type == IP_ADDRESS)
                        && name.get(1) instanceof String host) {
                    hosts.add(normalized(host));
                }
            }
        }
        return Set.copyOf(hosts);
    }

    /**
     * Whether a peer whose certificate names these hosts is one of the members: one of them is
     * the host of a member's name ({@code https://host:port}), or a wildcard for it.
     */
    public static boolean isMember(Set<String> certificateHosts, Collection<String> memberNames) {
        for (String member : memberNames) {
            if (names(certificateHosts, hostOf(member))) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether a certificate for these hosts names this one: exactly, or by a wildcard in the
     * left-most label alone (RFC 6125 6.4.3: {@code *.ringkv-headless.db.svc} names
     * {@code ringkv-0.ringkv-headless.db.svc}, not {@code a.b.ringkv-headless.db.svc} nor the
     * bare {@code ringkv-headless.db.svc}; never an IP address). A chart that gives every pod one certificate names
     * them so: the peer then proves it is one of the release's pods, not which one.
     */
    public static boolean names(Set<String> certificateHosts, String host) {
        if (host == null) {
            return false;
        }
        if (certificateHosts.contains(host)) {
            return true;
        }
        int firstDot = host.indexOf('.');
        boolean address = host.contains(":") || host.chars().allMatch(c -> c == '.' || Character.isDigit(c));
        return firstDot > 0 && !address && certificateHosts.contains("*" + host.substring(firstDot));
    }

    /** The host of a member's name, lower-case and without an IPv6 literal's brackets; null if it has none. */
    public static String hostOf(String memberName) {
        String host;
        try {
            host = URI.create(memberName).getHost();
        } catch (IllegalArgumentException e) {
            return null;
        }
        return host == null ? null : normalized(host);
    }

    private static String normalized(String host) {
        String bare = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
        // A DNS name ends with a dot when fully qualified; the certificate's and the URL's may differ in it.
        if (bare.endsWith(".")) {
            bare = bare.substring(0, bare.length() - 1);
        }
        if (bare.contains(":")) {
            // One spelling of an IPv6 address (::1 and 0:0:0:0:0:0:0:1 are the same). In brackets
            // the text is parsed as an address literal only, never looked up.
            try {
                return InetAddress.getByName("[" + bare + "]").getHostAddress();
            } catch (UnknownHostException notAnAddress) {
                return bare;
            }
        }
        return bare.toLowerCase(Locale.ROOT);
    }
}
