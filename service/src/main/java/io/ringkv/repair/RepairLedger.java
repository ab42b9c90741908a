package io.ringkv.repair;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

import io.ringkv.replication.ReplicaHistory;
import io.ringkv.storage.RocksStore;

/**
 * What this node knows about its own convergence, kept in the store's {@code meta} column family
 * so that a restart remembers it: when it last finished a repair with each peer, which peers
 * missed more than hints can bring back, and up to which timestamp it has purged tombstones.
 * Read once at start; every change is written through.
 */
public final class RepairLedger implements ReplicaHistory {

    private static final String REPAIRED = "repaired";
    private static final String NEEDS_REPAIR = "repair-needed";
    private static final String PURGED_BEFORE = "purged-before";

    private final RocksStore store;
    private final Map<String, Long> repaired = new ConcurrentHashMap<>();
    /** Peers that missed writes no hint holds, with when they last did. */
    private final Map<String, Long> needsRepair = new ConcurrentHashMap<>();
    /** When each mark was last saved: a peer that keeps missing writes is not saved on every one. */
    private final Map<String, Long> needsRepairSaved = new ConcurrentHashMap<>();
    private volatile long purgedBefore;

    /** Reads what the store kept; blocking, at start. */
    public RepairLedger(RocksStore store) {
        this.store = store;
        readMap(REPAIRED, repaired);
        readMap(NEEDS_REPAIR, needsRepair);
        purgedBefore = number(PURGED_BEFORE);
    }

    /** When a repair with the peer, started at that moment, last finished; 0 if never. */
    public long lastRepairMillis(String peer) {
        return repaired.getOrDefault(peer, 0L);
    }

    public Map<String, Long> lastRepairs() {
        return Map.copyOf(repaired);
    }

    /** A repair with the peer that started at {@code startedMillis} has finished: both held the same versions then. */
    @Override
    public synchronized void repaired(String peer, long startedMillis) {
        if (repaired.merge(peer, startedMillis, Math::max) == startedMillis) {
            saveMap(REPAIRED, repaired);
        }
        // Only a repair that started after the peer last missed a write covers that write.
        Long missedAt = needsRepair.get(peer);
        if (missedAt != null && startedMillis >= missedAt) {
            needsRepair.remove(peer);
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
    @Override
    public long purgedBefore() {
        return purgedBefore;
    }

    public synchronized void purgedBefore(long timestamp) {
        if (timestamp > purgedBefore) {
            purgedBefore = timestamp;
            saveNumber(PURGED_BEFORE, timestamp);
        }
    }

    /** A map of peer to milliseconds, saved as lines of {@code peer=millis} (a peer's name is a URL, and may hold '='). */
    private void readMap(String key, Map<String, Long> into) {
        text(key).lines().filter(line -> line.contains("="))
                .forEach(line -> into.put(line.substring(0, line.lastIndexOf('=')),
                        Long.parseLong(line.substring(line.lastIndexOf('=') + 1))));
    }

    private void saveMap(String key, Map<String, Long> map) {
        save(key, map.entrySet().stream().map(entry -> entry.getKey() + "=" + entry.getValue()).collect(Collectors.joining("\n")));
    }

    private String text(String key) {
        return store.meta(key).map(bytes -> new String(bytes, StandardCharsets.UTF_8)).orElse("");
    }

    private long number(String key) {
        return store.meta(key).filter(bytes -> bytes.length == 8).map(bytes -> ByteBuffer.wrap(bytes).getLong()).orElse(0L);
    }

    private void save(String key, String text) {
        store.putMeta(key, text.getBytes(StandardCharsets.UTF_8));
    }

    private void saveNumber(String key, long value) {
        store.putMeta(key, ByteBuffer.allocate(8).putLong(value).array());
    }
}
