package io.ringkv.ring;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.stream.Collectors;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Who is in the cluster: this node and the current ring of members, each with what it told about
 * itself ({@link Member}). Node names are stable URLs (a pod's DNS name, never its IP), so a
 * restarted node keeps its place on the ring. With a static peer list the ring never changes,
 * though its members' states and attributes do; with DNS discovery it is replaced, as a whole and
 * with a new version, each time the members change. A member's zone places keys too
 * ({@link HashRing}): a change of zone is a new version; other attributes alone keep it.
 */
public final class ClusterMembership {

    private static final Logger log = LoggerFactory.getLogger(ClusterMembership.class);

    /**
     * One ring and the version it has among this node's rings, with the rings of data movement:
     * {@code current} holds the members that own data now, {@code future} those that will.
     * With nobody joining or leaving, all three are the same ring.
     *
     * <p>Members joining together finish one by one, so the rings between are {@code current}
     * with some of them added. A member added to a ring only ever takes ranges from others, so a
     * joining member owns the most in {@code current} plus itself alone: {@code joining} holds
     * that ring for each of them, which is what it pulls and what writes must reach it for.
     */
    public record View(long version, HashRing ring, HashRing current, HashRing future, Map<String, HashRing> joining) {
    }

    private volatile Member self;
    /** The zone this node is set up in, where it differs from the zone it is placed in: where it moves to. */
    private volatile Optional<String> zoneToMoveTo = Optional.empty();
    private final int vnodes;
    private final AtomicReference<View> view;
    private final List<Consumer<View>> listeners = new CopyOnWriteArrayList<>();
    private final List<BiConsumer<String, MemberState>> departureListeners = new CopyOnWriteArrayList<>();
    private final Map<String, MemberState> states = new ConcurrentHashMap<>();
    private final Predicate<String> presumedHolder;
    private final RememberedZones rememberedZones;
    private volatile boolean known;

    /**
     * @param presumption     what this membership presumes of a member that has not told its state: whether it holds data
     * @param rememberedZones the zone of a member that has not told one (see {@link RememberedZones}); what is
     *                        remembered of the ring's zones once it is known
     */
    private ClusterMembership(Member self, Collection<Member> members, int vnodes, boolean known,
            Function<ClusterMembership, Predicate<String>> presumption, RememberedZones rememberedZones) {
        if (members.stream().noneMatch(member -> member.name().equals(self.name()))) {
            throw new IllegalArgumentException(self.name() + " is not among the members " + members);
        }
        this.self = self;
        this.vnodes = vnodes;
        this.presumedHolder = presumption.apply(this);
        this.rememberedZones = rememberedZones;
        HashRing ring = new HashRing(recalled(members), vnodes);
        this.view = new AtomicReference<>(new View(1, ring, ring, ring, Map.of()));
        this.known = known;
        listeners.add(view -> {
            if (isKnown()) {
                rememberedZones.rememberZones(view.ring().zones());
            }
        });
        if (known) {
            // Its own zone among them: a node alone may never see its ring change.
            rememberedZones.rememberZones(ring.zones());
        }
    }

    /**
     * The members as this node places them: itself as it is set up, whatever the list says of it;
     * one that has not told a zone, in the zone remembered for it.
     */
    private List<Member> recalled(Collection<Member> members) {
        List<Member> recalled = new ArrayList<>(members.size());
        for (Member member : members) {
            if (member.name().equals(self.name())) {
                continue;
            }
            recalled.add(member.zone().isPresent() ? member
                    : rememberedZones.zoneOf(member.name()).map(member::withZone).orElse(member));
        }
        recalled.add(self);
        return recalled;
    }

    /**
     * A fixed cluster (a static peer list), known from the start, for a node whose store is a
     * member's: a member that has not told its state holds data, as every listed member did when
     * this node last ran (a down one keeps its ranges, and a read that asks it fails over).
     */
    public static ClusterMembership fixed(Member self, Collection<Member> members, int vnodes, RememberedZones zones) {
        return new ClusterMembership(self, members, vnodes, true, membership -> member -> true, zones);
    }

    /** {@link #fixed(Member, Collection, int, RememberedZones)} remembering no zones. */
    public static ClusterMembership fixed(Member self, Collection<Member> members, int vnodes) {
        return fixed(self, members, vnodes, RememberedZones.NONE);
    }

    /**
     * A fixed cluster for a node whose store is not a member's yet (new, or emptied), which it
     * knows once it has asked the members for their states ({@link #markKnown}). While it joins,
     * a member that did not tell its state is presumed to hold no data: it is down, or a new
     * cluster's node not started yet, and gives this node nothing to pull or wait for. Once this
     * node holds data, every such member is presumed to, as in {@link #fixed}. Unlike a
     * StatefulSet's members ({@link #discovered(Member, int, DataHolders, RememberedZones)}), a static list's are the
     * same at every start, so this node's own store is all it needs to remember.
     */
    public static ClusterMembership fixedJoining(Member self, Collection<Member> members, int vnodes, RememberedZones zones) {
        return new ClusterMembership(self, members, vnodes, false,
                membership -> member -> membership.state(membership.self()).holdsData(), zones);
    }

    /**
     * A cluster that discovery will fill in; until its first round, a ring of this node alone.
     * Members join it as they answer, telling their state as they do.
     */
    public static ClusterMembership discovered(Member self, int vnodes, RememberedZones zones) {
        return new ClusterMembership(self, List.of(self), vnodes, false, membership -> member -> true, zones);
    }

    /** {@link #discovered(Member, int, RememberedZones)} remembering no zones. */
    public static ClusterMembership discovered(Member self, int vnodes) {
        return discovered(self, vnodes, RememberedZones.NONE);
    }

    /**
     * Like {@link #discovered(Member, int)}, for members that may be on the ring before they ever
     * answered (a StatefulSet's intended members): until one tells its state, it holds data if it
     * did when this node last knew ({@code dataHolders}), else it counts as JOINING (a new pod:
     * reads do not ask it, writes go to it as to a joiner). Once the ring is known, every change
     * of who holds data is remembered there.
     */
    public static ClusterMembership discovered(Member self, int vnodes, DataHolders dataHolders, RememberedZones zones) {
        ClusterMembership membership = new ClusterMembership(self, List.of(self), vnodes, false,
                ignored -> dataHolders::heldData, zones);
        membership.onChange(view -> {
            if (membership.isKnown()) {
                dataHolders.rememberDataHolders(view.ring().names().stream()
                        .filter(member -> membership.state(member).holdsData()).collect(Collectors.toSet()));
            }
        });
        return membership;
    }

    /** This node's name on the ring. */
    public String self() {
        return self.name();
    }

    /** This node as a member: its name and attributes, as it tells them to its peers. */
    public Member selfMember() {
        return self;
    }

    /**
     * This node is set up in another zone than the one its store is placed in: it moves there once
     * its data has ({@code handover.DataMovement}). Until then it stays where it is placed, so that
     * its keys' replicas stay where their data is.
     */
    public void planZoneMove(String zone) {
        if (self.zone().isEmpty() || self.zone().get().equals(zone)) {
            throw new IllegalArgumentException("a move is from one zone to another; " + self + " to " + zone);
        }
        zoneToMoveTo = Optional.of(zone);
    }

    /** The zone this node is to move to, if it is to. */
    public Optional<String> zoneToMoveTo() {
        return zoneToMoveTo;
    }

    /**
     * This node moves to the zone it is to move to: its ring is rebuilt with it there (a new
     * version), and its peers learn the zone as it answers them.
     */
    public void moveToPlannedZone() {
        String zone = zoneToMoveTo.orElseThrow(() -> new IllegalStateException("no zone move is planned"));
        self = self.withZone(zone);
        zoneToMoveTo = Optional.empty();
        log.info("this node is in zone '{}' from now on", zone);
        update(ring().members());
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

    /** The ring is known from now on; told to the listeners, as a change of the view. */
    public void markKnown() {
        known = true;
        View now = view.get();
        listeners.forEach(listener -> listener.accept(now));
    }

    /**
     * What a member told about itself (its attributes) in a ping or in an answer to one: the ring
     * takes it as from a discovery round's probe, only sooner. A member not in the ring is ignored.
     */
    public void told(String member, Map<String, String> attributes) {
        List<Member> members = ring().members();
        if (members.stream().noneMatch(known -> known.name().equals(member) && !known.attributes().equals(attributes))) {
            return;
        }
        update(members.stream().map(known -> known.name().equals(member) ? new Member(member, attributes) : known).toList());
    }

    /**
     * Replaces the ring when the members differ, logging the change once: in name or zone, as a new
     * version of the ring (keys move); in other attributes alone, as the same version (nothing moves).
     */
    public void update(Collection<Member> members) {
        View before = view.get();
        List<Member> recalled = recalled(members);
        if (Set.copyOf(before.ring().members()).equals(Set.copyOf(recalled))) {
            return;
        }
        HashRing ring = new HashRing(recalled, vnodes);
        boolean samePlacement = ring.placesAs(before.ring());
        View after = withMovement(samePlacement ? before.version() : before.version() + 1, ring);
        if (!view.compareAndSet(before, after)) {
            update(members);
            return;
        }
        if (samePlacement) {
            ring.members().stream().filter(member -> !before.ring().members().contains(member))
                    .forEach(member -> log.info("{} tells {}", member.name().equals(self()) ? "this node" : member.name(),
                            new TreeMap<>(member.attributes())));
        } else {
            log.info("ring changed to version {}: {} -> {}", after.version(), describe(before.ring()), describe(ring));
            for (String member : before.ring().names()) {
                if (!ring.names().contains(member)) {
                    // It takes its state with it: if the name comes back, it tells its state again.
                    MemberState last = state(member);
                    states.remove(member);
                    departureListeners.forEach(listener -> listener.accept(member, last));
                }
            }
        }
        listeners.forEach(listener -> listener.accept(after));
    }

    /** A ring's members, with their zones where any has one. */
    private static String describe(HashRing ring) {
        return ring.zones().isEmpty() ? ring.names().toString() : ring.names() + " in zones " + ring.zones();
    }

    /**
     * A member's state as it told it (this node's own included); until it told one, NORMAL, or
     * JOINING for a member not presumed to hold data (see {@link #discovered(Member, int, DataHolders, RememberedZones)}
     * and {@link #fixedJoining}).
     */
    public MemberState state(String member) {
        MemberState told = states.get(member);
        return told != null ? told : presumed(member);
    }

    private MemberState presumed(String member) {
        return member.equals(self()) || presumedHolder.test(member) ? MemberState.NORMAL : MemberState.JOINING;
    }

    /**
     * Whether a member other than this node holds data, as it told or as this node presumes: a node
     * whose store is not a member's then pulls its ranges before it serves them; where none does
     * (a new cluster, every member joining) it serves at once, with nothing to wait for. The one
     * decision, whatever finds the members.
     */
    public boolean othersHoldData() {
        return ring().names().stream().anyMatch(member -> !member.equals(self()) && state(member).holdsData());
    }

    /** Records a member's state; when it changes who holds data, the rings of movement follow. */
    public void setState(String member, MemberState state) {
        MemberState told = states.put(member, state);
        MemberState before = told != null ? told : presumed(member);
        if (before == state) {
            return;
        }
        log.info("{} is {} (was {})", member.equals(self()) ? "this node" : member, state, before);
        while (true) {
            View current = view.get();
            View after = withMovement(current.version(), current.ring());
            if (view.compareAndSet(current, after)) {
                listeners.forEach(listener -> listener.accept(after));
                return;
            }
        }
    }

    /** The ring with its current and future rings, from the members' states. */
    private View withMovement(long version, HashRing ring) {
        List<Member> holding = ring.members().stream().filter(member -> state(member.name()).holdsData()).toList();
        List<Member> willHold = ring.members().stream().filter(member -> state(member.name()).willHoldData()).toList();
        HashRing current = holding.isEmpty() || holding.size() == ring.size() ? ring : new HashRing(holding, vnodes);
        HashRing future = willHold.isEmpty() || willHold.size() == ring.size() ? ring : new HashRing(willHold, vnodes);
        Map<String, HashRing> joining = new TreeMap<>();
        for (Member member : ring.members()) {
            if (state(member.name()) == MemberState.JOINING && !current.names().contains(member.name())) {
                List<Member> withIt = new ArrayList<>(current.members());
                withIt.add(member);
                joining.put(member.name(), withIt.size() == ring.size() ? ring : new HashRing(withIt, vnodes));
            }
        }
        return new View(version, ring, current, future, Map.copyOf(joining));
    }

    public void onChange(Consumer<View> listener) {
        listeners.add(listener);
    }

    /** Hears each member that leaves the ring, with the state it last told (LEAVING or LEFT: it handed its data over). */
    public void onDeparture(BiConsumer<String, MemberState> listener) {
        departureListeners.add(listener);
    }
}
