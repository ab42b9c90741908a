package io.ringkv.ledger;

import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.ringkv.peer.wire.MemberName;
import io.ringkv.peer.wire.PeerStatus;
import io.ringkv.ring.DataHolders;
import io.ringkv.ring.Member;
import io.ringkv.ring.MemberState;
import io.ringkv.ring.RememberedZones;
import io.ringkv.storage.MetaStore;
import io.ringkv.storage.RocksStore;

/**
 * What this node knows about its own convergence, kept in the store's {@code meta} column family
 * so that a restart remembers it: when it last finished a repair with each peer, which peers
 * missed more than hints can bring back, up to which timestamp it has purged tombstones, whether
 * the store ever finished joining a cluster or has left it, and which members held data. Read
 * once at start; every change is written through.
 *
 * <p>A store whose node left the cluster (scaled away) is cleared when it is opened again: while
 * it was away the others went on overwriting and deleting, and purged the tombstones, so its
 * records could bring deleted or overwritten data back. The node then joins like a new one.
 */
public final class RepairLedger implements DataHolders, RememberedZones {

    private static final Logger log = LoggerFactory.getLogger(RepairLedger.class);

    private static final String REPAIRED = "repaired";
    private static final String NEEDS_REPAIR = "repair-needed";
    private static final String PURGED_BEFORE = "purged-before";
    private static final String MEMBERSHIP = "membership";
    private static final String JOINING = "joining";
    private static final String JOINED = "joined";
    private static final String LEFT = "left";
    private static final String DATA_HOLDERS = "data-holders";
    private static final String ZONES = "zones";

    private final MetaStore meta;
    private final Map<String, Long> repaired = new ConcurrentHashMap<>();
    /** Peers that missed writes no hint holds, with when they last did. */
    private final Map<String, Long> needsRepair = new ConcurrentHashMap<>();
    /** When each mark was last saved: a peer that keeps missing writes is not saved on every one. */
    private final Map<String, Long> needsRepairSaved = new ConcurrentHashMap<>();
    /** The members that held data when this node last knew its ring. */
    private volatile Set<String> dataHolders;
    /** The ring's members' zones when this node last knew its ring, this node's own among them. */
    private volatile Map<String, String> zones;
    private volatile long purgedBefore;
    private volatile boolean joined;
    private volatile boolean left;

    /** Reads what the store kept, clearing a store whose node had left; blocking, at start. */
    public RepairLedger(RocksStore store) {
        this.meta = new MetaStore(store);
        String membership = text(MEMBERSHIP);
        if (membership.equals(LEFT)) {
            log.warn("this volume belonged to a node that left the cluster: its data may be older than what the cluster"
                    + " has purged since, so it is cleared and the node joins as a new one");
            store.clear();
            membership = "";
        } else if (membership.isEmpty() && !store.isEmpty()) {
            // Data written before joins were recorded: it is a member's. (A store that was still
            // joining says so, however much it holds: see markJoining.)
            membership = JOINED;
            save(MEMBERSHIP, JOINED);
        }
        joined = membership.equals(JOINED);
        readMap(REPAIRED, repaired);
        // Before 2026-11-25 a repair a peer ran was recorded under its name and connection address
        // ("http://node-1:8080 at /10.0.0.7:41234"), one entry per connection: dropped.
        if (repaired.keySet().removeIf(peer -> peer.contains(" at "))) {
            saveMap(REPAIRED, repaired);
        }
        readMap(NEEDS_REPAIR, needsRepair);
        purgedBefore = number(PURGED_BEFORE);
        dataHolders = text(DATA_HOLDERS).lines().filter(line -> !line.isBlank()).collect(Collectors.toUnmodifiableSet());
        zones = readZones();
    }

    /**
     * Whether the member held data (NORMAL or LEAVING) when this node last knew its ring: after a
     * restart, a member that is down still holds its ranges here, as it does on the other nodes.
     */
    @Override
    public boolean heldData(String member) {
        return dataHolders.contains(member);
    }

    /** The members that hold data now, remembered for {@link #heldData} across restarts; written when they change. */
    @Override
    public synchronized void rememberDataHolders(Set<String> holders) {
        // A name is a URL; one with a line break could not be told apart from two, so it is not kept.
        Set<String> kept = holders.stream().filter(name -> name.chars().noneMatch(Character::isISOControl))
                .collect(Collectors.toUnmodifiableSet());
        if (!kept.equals(dataHolders)) {
            dataHolders = kept;
            save(DATA_HOLDERS, String.join("\n", new TreeSet<>(kept)));
        }
    }

    @Override
    public Optional<String> zoneOf(String member) {
        return Optional.ofNullable(zones.get(member));
    }

    /** Written when they change. */
    @Override
    public synchronized void rememberZones(Map<String, String> told) {
        Map<String, String> kept = new TreeMap<>(told);
        // As in rememberDataHolders: a name with a line break could not be read back as one.
        kept.keySet().removeIf(name -> name.chars().anyMatch(Character::isISOControl));
        if (!kept.equals(zones)) {
            zones = Map.copyOf(kept);
            save(ZONES, kept.entrySet().stream()
                    .map(entry -> URLEncoder.encode(entry.getKey(), StandardCharsets.UTF_8) + "=" + entry.getValue())
                    .collect(Collectors.joining("\n")));
        }
    }

    /** What rememberZones wrote; a line that is not a name and a zone of a member's form is skipped, as in readMap. */
    private Map<String, String> readZones() {
        Map<String, String> read = new TreeMap<>();
        text(ZONES).lines().filter(line -> !line.isBlank()).forEach(line -> {
            int separator = line.lastIndexOf('=');
            try {
                String zone = separator < 1 ? "" : line.substring(separator + 1);
                if (!Member.validText(zone)) {
                    throw new IllegalArgumentException("no member=zone");
                }
                read.put(URLDecoder.decode(line.substring(0, separator), StandardCharsets.UTF_8), zone);
            } catch (IllegalArgumentException e) {
                log.warn("skipped an unreadable line of the repair ledger's {} ({}): {}", ZONES, e.getMessage(), MemberName.forLog(line));
            }
        });
        return Map.copyOf(read);
    }

    /** When a repair with the peer, started at that moment, last finished; 0 if never. */
    public long lastRepairMillis(String peer) {
        return repaired.getOrDefault(peer, 0L);
    }

    public Map<String, Long> lastRepairs() {
        return Map.copyOf(repaired);
    }

    /** A repair with the peer that started at {@code startedMillis} has finished: both held the same versions then. */
    public synchronized void repaired(String peer, long startedMillis) {
        caughtUpWith(peer, startedMillis);
        // Only a repair that started after the peer last missed a write covers that write.
        Long missedAt = needsRepair.get(peer);
        if (missedAt != null && startedMillis >= missedAt) {
            needsRepair.remove(peer);
            needsRepairSaved.remove(peer);
            saveMap(NEEDS_REPAIR, needsRepair);
        }
    }

    /**
     * This node holds every record the peer held at {@code startedMillis} (it pulled the ranges
     * they share when it joined); the peer may still lack this node's. Counts as a repair for what
     * this node may purge and for the peers' purge horizons it checks ({@link io.ringkv.tombstones.PurgeHorizonCheck}).
     */
    public synchronized void caughtUpWith(String peer, long startedMillis) {
        if (repaired.merge(peer, startedMillis, Math::max) == startedMillis) {
            saveMap(REPAIRED, repaired);
        }
    }

    /** The peer is gone for good (it handed its data over, or stayed away past the grace period): nothing waits for it. */
    public synchronized void forget(String peer) {
        if (repaired.remove(peer) != null) {
            saveMap(REPAIRED, repaired);
        }
        if (needsRepair.remove(peer) != null) {
            needsRepairSaved.remove(peer);
            saveMap(NEEDS_REPAIR, needsRepair);
        }
    }

    /**
     * The peer missed a write that no hint holds (at {@code nowMillis}): it needs a repair that
     * starts later than that. Cheap to call on every such write: the mark is saved at most once a second.
     */
    public void markForFullRepair(String peer, long nowMillis) {
        needsRepair.merge(peer, nowMillis, Math::max);
        Long saved = needsRepairSaved.get(peer);
        if (saved == null || nowMillis - saved >= 1000) {
            synchronized (this) {
                needsRepairSaved.put(peer, nowMillis);
                saveMap(NEEDS_REPAIR, needsRepair);
            }
        }
    }

    public boolean needsFullRepair(String peer) {
        return needsRepair.containsKey(peer);
    }

    public Set<String> peersNeedingRepair() {
        return Set.copyOf(needsRepair.keySet());
    }

    /** The highest timestamp below which this node may have purged tombstones. */
    public long purgedBefore() {
        return purgedBefore;
    }

    public synchronized void purgedBefore(long timestamp) {
        if (timestamp > purgedBefore) {
            purgedBefore = timestamp;
            saveNumber(PURGED_BEFORE, timestamp);
        }
    }

    /** Whether this store holds a member's data: it finished joining, and has not left since. */
    public boolean joined() {
        return joined;
    }

    /**
     * The node starts taking its ranges (new, emptied, or moving to another zone): until it has
     * ({@link #markJoined}), the store is not a member's, even once it holds records (writes it took while joining, ranges half pulled). A
     * restart meanwhile joins again, rather than take it for a member's data from before joins
     * were recorded and serve the half it holds.
     */
    public synchronized void markJoining() {
        if (!left) {
            joined = false;
            save(MEMBERSHIP, JOINING);
        }
    }

    /**
     * The node has pulled the ranges it owns: its store is a member's. Refused once the store was
     * marked left in this process (a leave, or a store found behind its peers' purges while a join
     * was still pulling): only a restart, which clears it, may join again.
     *
     * @return whether the store is now a member's
     */
    public synchronized boolean markJoined() {
        if (left) {
            return false;
        }
        joined = true;
        save(MEMBERSHIP, JOINED);
        return true;
    }

    /**
     * The node is leaving the cluster: from now on its store falls behind, so it must not serve
     * again as it is. Written before the node hands its data over, so that a leave cut short counts too.
     *
     * @return completes once the mark is stored
     */
    public synchronized CompletableFuture<Boolean> markLeft() {
        left = true;
        joined = false;
        return save(MEMBERSHIP, LEFT);
    }

    /** Whether the store was marked left in this process: it must not serve again as it is. */
    public boolean markedLeft() {
        return left;
    }

    /**
     * A map of peer to milliseconds, saved as lines of {@code peer=millis} with the name
     * URL-encoded, so that no name, whatever it holds ({@code =}, a line break), can break a line.
     * A member's name ({@code http://host:port}) reads the same encoded or not, so lines written
     * before names were encoded read as they did. A line that cannot be read is skipped with a
     * warning: it costs a repair, where failing would keep the node from starting at all.
     */
    private void readMap(String key, Map<String, Long> into) {
        text(key).lines().filter(line -> !line.isBlank()).forEach(line -> {
            int separator = line.lastIndexOf('=');
            try {
                if (separator < 1) {
                    throw new IllegalArgumentException("no peer=millis");
                }
                into.put(URLDecoder.decode(line.substring(0, separator), StandardCharsets.UTF_8),
                        Long.parseLong(line.substring(separator + 1)));
            } catch (IllegalArgumentException e) {
                log.warn("skipped an unreadable line of the repair ledger's {} ({}): {}", key, e.getMessage(),
                        MemberName.forLog(line));
            }
        });
    }

    private void saveMap(String key, Map<String, Long> map) {
        save(key, map.entrySet().stream().map(entry -> URLEncoder.encode(entry.getKey(), StandardCharsets.UTF_8) + "=" + entry.getValue())
                .collect(Collectors.joining("\n")));
    }

    private String text(String key) {
        return meta.get(key).map(bytes -> new String(bytes, StandardCharsets.UTF_8)).orElse("");
    }

    private long number(String key) {
        return meta.get(key).filter(bytes -> bytes.length == 8).map(bytes -> ByteBuffer.wrap(bytes).getLong()).orElse(0L);
    }

    private CompletableFuture<Boolean> save(String key, String text) {
        return meta.put(key, text.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * What this node, in that member state, tells a peer about itself, in its PING or its answer to
     * the peer's: how far it has purged tombstones and when its last repair with the peer started.
     */
    public PeerStatus statusFor(String peer, MemberState state) {
        return new PeerStatus(state.ordinal(), purgedBefore(), lastRepairMillis(peer));
    }

    private void saveNumber(String key, long value) {
        meta.put(key, ByteBuffer.allocate(8).putLong(value).array());
    }
}
