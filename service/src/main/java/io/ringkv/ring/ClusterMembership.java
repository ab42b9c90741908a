package io.ringkv.ring;

import java.util.Collection;

/**
 * Who is in the cluster: this node's name and the current ring of members. Node names are stable
 * URLs (a pod's DNS name, never its IP), so a restarted node keeps its place on the ring.
 */
public final class ClusterMembership {

    private final String self;
    private final HashRing ring;

    public ClusterMembership(String self, Collection<String> members, int vnodes) {
        if (!members.contains(self)) {
            throw new IllegalArgumentException(self + " is not among the members " + members);
        }
        this.self = self;
        this.ring = new HashRing(members, vnodes);
    }

    public String self() {
        return self;
    }

    public HashRing ring() {
        return ring;
    }
}
