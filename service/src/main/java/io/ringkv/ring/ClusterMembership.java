package io.ringkv.ring;

import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Who is in the cluster: this node's name and the current ring of members. Node names are stable
 * URLs (a pod's DNS name, never its IP), so a restarted node keeps its place on the ring. With a
 * static peer list the ring never changes; with DNS discovery it is replaced, as a whole and
 * with a new version, each time the members change.
 */
public final class ClusterMembership {

    private static final Logger log = LoggerFactory.getLogger(ClusterMembership.class);

    /** One ring and the version it has among this node's rings. */
    public record View(long version, HashRing ring) {
    }

    private final String self;
    private final int vnodes;
    private final AtomicReference<View> view;
    private final List<Consumer<View>> listeners = new CopyOnWriteArrayList<>();
    private volatile boolean known;

    private ClusterMembership(String self, Collection<String> members, int vnodes, boolean known) {
        if (!members.contains(self)) {
            throw new IllegalArgumentException(self + " is not among the members " + members);
        }
        this.self = self;
        this.vnodes = vnodes;
        this.view = new AtomicReference<>(new View(1, new HashRing(members, vnodes)));
        this.known = known;
    }

    /** A fixed cluster, known from the start. */
    public static ClusterMembership fixed(String self, Collection<String> members, int vnodes) {
        return new ClusterMembership(self, members, vnodes, true);
    }

    /** A cluster that discovery will fill in; until its first round, a ring of this node alone. */
    public static ClusterMembership discovered(String self, int vnodes) {
        return new ClusterMembership(self, List.of(self), vnodes, false);
    }

    public String self() {
        return self;
    }

    public HashRing ring() {
        return view.get().ring();
    }

    public View view() {
        return view.get();
    }

    /** Whether this node knows its ring: always with static peers, after the first round of discovery. */
    public boolean isKnown() {
        return known;
    }

    public void markKnown() {
        known = true;
    }

    /** Replaces the ring when the members differ, logging the change once. */
    public void update(Set<String> members) {
        View before = view.get();
        if (Set.copyOf(before.ring().members()).equals(members)) {
            return;
        }
        View after = new View(before.version() + 1, new HashRing(members, vnodes));
        if (view.compareAndSet(before, after)) {
            log.info("ring changed to version {}: {} -> {}", after.version(), before.ring().members(), new TreeSet<>(members));
            listeners.forEach(listener -> listener.accept(after));
        }
    }

    public void onChange(Consumer<View> listener) {
        listeners.add(listener);
    }
}
