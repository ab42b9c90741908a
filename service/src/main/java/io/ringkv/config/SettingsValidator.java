package io.ringkv.config;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Checks the settings once at start-up, so that a mistake stops the node with one line that names
 * the setting instead of surfacing later as a confusing failure.
 */
final class SettingsValidator {

    private SettingsValidator() {
    }

    /** The node's name on the ring: its URL reduced to {@code scheme://host:port}. */
    static String nodeName(String setting, URI url) {
        String scheme = url.getScheme();
        if (scheme == null || !(scheme.equals("http") || scheme.equals("https"))) {
            throw new InvalidSettingException(setting, "'" + url + "' is not an http:// or https:// URL");
        }
        if (url.getHost() == null) {
            throw new InvalidSettingException(setting, "'" + url + "' has no host name");
        }
        boolean bare = (url.getRawPath() == null || url.getRawPath().isEmpty() || url.getRawPath().equals("/"))
                && url.getRawQuery() == null && url.getRawFragment() == null && url.getRawUserInfo() == null;
        if (!bare) {
            throw new InvalidSettingException(setting, "'" + url + "' must be only scheme, host and port, such as http://10.0.0.1:8080");
        }
        int port = url.getPort() >= 0 ? url.getPort() : scheme.equals("https") ? 443 : 80;
        return scheme + "://" + url.getHost() + ":" + port;
    }

    /** The members' names; with no peers given, a cluster of this node alone. */
    static List<String> members(String self, List<URI> peers) {
        if (peers.isEmpty()) {
            return List.of(self);
        }
        Set<String> names = new LinkedHashSet<>();
        for (URI peer : peers) {
            if (!names.add(nodeName("ringkv.cluster.peers", peer))) {
                throw new InvalidSettingException("ringkv.cluster.peers", "'" + peer + "' is listed twice");
            }
        }
        if (!names.contains(self)) {
            throw new InvalidSettingException("ringkv.cluster.self",
                    self + " is not among ringkv.cluster.peers " + names);
        }
        return new ArrayList<>(names);
    }

    /** Discovery replaces the peer list, and needs a name for this node that other nodes can reach. */
    static void discovery(String self, List<URI> peers, RingkvProperties.Discovery discovery) {
        if (!peers.isEmpty()) {
            throw new InvalidSettingException("ringkv.cluster.discovery.dns-name",
                    "set either it or ringkv.cluster.peers, not both");
        }
        String host = URI.create(self).getHost();
        if (host.equals("localhost") || host.startsWith("127.")) {
            throw new InvalidSettingException("ringkv.cluster.self",
                    "with DNS discovery it must be this node's stable DNS name, such as http://ringkv-0.ringkv-headless:8080, not " + self);
        }
        positive("ringkv.cluster.discovery.refresh-interval", discovery.refreshInterval().toMillis());
        positive("ringkv.cluster.discovery.removal-after", discovery.removalAfter());
    }

    /**
     * The cluster secret: required as soon as the node has peers, since peers accept each other
     * only on proof of it. A node alone needs none; it then refuses every connection to its cluster port.
     */
    static String secret(String secret, boolean hasPeers) {
        if (secret != null && !secret.isBlank()) {
            return secret;
        }
        if (hasPeers) {
            throw new InvalidSettingException("ringkv.cluster.secret",
                    "is required when the node has peers (ringkv.cluster.peers or discovery): give every member the same one, "
                            + "or name a Kubernetes Secret that holds it in ringkv.cluster.kubernetes-secret");
        }
        return null;
    }

    /** A TCP port, or 0 for a free one. */
    static int port(String setting, Integer port) {
        if (port == null) {
            return 0;
        }
        if (port < 0 || port > 65535) {
            throw new InvalidSettingException(setting, "must be a TCP port (1-65535), or unset for a free one, got " + port);
        }
        return port;
    }

    /** Creates the data directory if needed and proves it writable by writing a file there. */
    static void writableDirectory(String setting, Path directory) {
        try {
            Files.createDirectories(directory);
            Path probe = Files.createTempFile(directory, ".write-check", ".tmp");
            Files.delete(probe);
        } catch (IOException | SecurityException e) {
            throw new InvalidSettingException(setting, "'" + directory + "' is not a writable directory (" + e.getMessage() + ")");
        }
    }

    static void percentage(String setting, float value) {
        if (!(value > 0 && value <= 100)) {
            throw new InvalidSettingException(setting, "must be a percentage above 0 and at most 100, got " + value);
        }
    }

    static void notNegative(String setting, long value) {
        if (value < 0) {
            throw new InvalidSettingException(setting, "must not be negative, got " + value);
        }
    }

    static void positive(String setting, long value) {
        if (value <= 0) {
            throw new InvalidSettingException(setting, "must be positive, got " + value);
        }
    }
}
