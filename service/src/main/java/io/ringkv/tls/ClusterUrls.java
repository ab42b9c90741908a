package io.ringkv.tls;

import java.util.Collection;

import io.ringkv.settings.InvalidSettingException;


/**
 * The members' URLs say how to reach them: {@code https://} when the nodes speak TLS,
 * {@code http://} when they do not. A URL of the other kind would only fail later, at each call
 * to that member, so it stops the node at start instead.
 */
public final class ClusterUrls {

    private ClusterUrls() {
    }

    /**
     * @param selfName    this node's name ({@code ringkv.cluster.self} or its default)
     * @param memberNames the members' names ({@code ringkv.cluster.peers}), this node's among them
     */
    public static void requireScheme(boolean tlsEnabled, String selfName, Collection<String> memberNames) {
        String scheme = tlsEnabled ? "https" : "http";
        String because = tlsEnabled ? "ringkv.tls.enabled is true" : "ringkv.tls.enabled is false";
        if (!selfName.startsWith(scheme + "://")) {
            throw new InvalidSettingException("ringkv.cluster.self", "must be an " + scheme + ":// URL since " + because
                    + ", got " + selfName + (tlsEnabled ? " (set it to this node's URL, with a host its certificate is for)" : ""));
        }
        for (String member : memberNames) {
            if (!member.startsWith(scheme + "://")) {
                throw new InvalidSettingException("ringkv.cluster.peers", "must be " + scheme + ":// URLs since " + because
                        + ", got " + member);
            }
        }
    }
}
