package io.ringkv.discovery;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

import io.ringkv.ring.Member;

/**
 * Decides who is on the ring from what discovery sees each round.
 *
 * <p>Where the cluster's intent is known (a StatefulSet's {@code spec.replicas}: ordinals
 * {@code 0..N-1}), it decides: every intended member is on the ring from the first round, whether
 * it answers or not, and stays there while it is down, Pending, evicted or absent from DNS. Down
 * is not departed: only a scale-down takes a member off, and then as below, once it has handed
 * its data over. A name beyond the intent does not join.
 *
 * <p>Without an intent, and for members beyond it, the ring follows what answers, with damping: a
 * name joins once it has answered, and leaves only after it has been absent from DNS for
 * {@code removalAfter} consecutive rounds (at once if it said it was leaving and stopped
 * answering). A member that is listed but does not answer stays: it is unreachable, not gone.
 * This node is always a member. Each member is as it last told itself in an answer (its
 * attributes); an intended one that never answered is known by its name only. Plain Java, no I/O.
 */
public final class MembershipTracker {

    private final Member self;
    private final int removalAfter;
    private final Map<String, Member> members = new TreeMap<>();
    private final Map<String, Integer> missedRounds = new HashMap<>();

    public MembershipTracker(Member self, int removalAfter) {
        if (removalAfter < 1) {
            throw new IllegalArgumentException("removalAfter must be at least 1");
        }
        this.self = self;
        this.removalAfter = removalAfter;
        members.put(self.name(), self);
    }

    /**
     * Takes one discovery round.
     *
     * @param answered members that answered this round (they are reachable), as they told themselves
     * @param listed   names DNS still lists this round, answered or not
     * @param departed members that said they were leaving (they hand their data over first): one
     *                 that does not answer any more has gone, and goes at once, while DNS may still
     *                 list its terminating pod; until then reads and writes would wait for it
     * @param intended the members the cluster is meant to have, when known (null: not known)
     * @return the new members when they changed, in name or in what they told
     */
    public Optional<Set<Member>> observe(Set<Member> answered, Set<String> listed, Set<String> departed,
            Set<String> intended) {
        boolean changed = false;
        if (intended != null) {
            for (String name : intended) {
                changed |= members.putIfAbsent(name, Member.named(name)) == null;
                missedRounds.remove(name);
            }
        }
        Set<String> answeredNames = new HashSet<>();
        for (Member told : answered) {
            String name = told.name();
            answeredNames.add(name);
            if (intended != null && !intended.contains(name) && !members.containsKey(name)) {
                continue; // beyond the intent: being scaled away, or not of this cluster
            }
            changed |= !told.equals(members.put(name, told));
            missedRounds.remove(name);
        }
        for (String member : Set.copyOf(members.keySet())) {
            if (intended != null && intended.contains(member)) {
                continue; // down is not departed
            }
            if (departed.contains(member) && !answeredNames.contains(member) && !member.equals(self.name())) {
                members.remove(member);
                missedRounds.remove(member);
                changed = true;
                continue;
            }
            if (member.equals(self.name()) || answeredNames.contains(member) || listed.contains(member)) {
                missedRounds.remove(member);
                continue;
            }
            int missed = missedRounds.merge(member, 1, Integer::sum);
            if (missed >= removalAfter) {
                members.remove(member);
                missedRounds.remove(member);
                changed = true;
            }
        }
        return changed ? Optional.of(members()) : Optional.empty();
    }

    public Set<Member> members() {
        return Set.copyOf(members.values());
    }

    /**
     * The bootstrap gate: whether a round reached enough of the members DNS lists for this node to
     * trust its ring. A node that DNS shows with others must not serve as a ring of itself alone
     * (it would take writes at 1/1 that the others never see): it waits until it reached every
     * other listed member, or a majority of all listed (itself included), or until the caller's
     * timeout for a genuine single node runs out.
     *
     * @param listedOthers addresses DNS lists this round besides this node's own
     * @param answered     members other than this node that answered this round
     */
    public static boolean reachedEnough(int listedOthers, int answered) {
        return answered >= listedOthers || 2 * (answered + 1) > listedOthers + 1;
    }
}
