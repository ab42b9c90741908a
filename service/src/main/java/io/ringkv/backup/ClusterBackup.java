package io.ringkv.backup;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.ringkv.replication.RemoteReplica;

/**
 * A backup of the whole cluster, asked of any node: it names the backup, writes who takes part
 * ({@link BackupStarted}), and has every member take its snapshot at about the same moment (its
 * own through {@link NodeBackup}, its peers' through the peer protocol), each then uploading on its
 * own. Whichever node stores the last manifest of a backup applies retention. Every call here
 * blocks on the backup store or on peers: the endpoint runs them on a thread that may block.
 */
public final class ClusterBackup {

    private static final Logger log = LoggerFactory.getLogger(ClusterBackup.class);

    /** What starting a backup did: its id, who takes part, and the members that could not take their snapshot, with why. */
    public record Started(String id, List<String> members, Map<String, String> refused) {
    }

    /** The store's backups and this node's own part in the last one. */
    public record Report(String store, int keep, Long lastCompleteMillis, Progress thisNode, List<Summary> backups) {
    }

    /** One backup as {@code GET /actuator/backup} lists it. */
    public record Summary(String id, boolean complete, List<String> members, List<String> missing) {
    }

    private final String self;
    private final Supplier<List<String>> members;
    private final Function<String, RemoteReplica> peers;
    private final NodeBackup local;
    private final BackupStore store;
    private final int keep;
    private final Duration peerTimeout;
    private final LongSupplier clock;

    /**
     * @param members     the ring's members now, this node among them
     * @param peers       a member by name, null if it is no member
     * @param keep        complete backups kept ({@code ringkv.backup.keep})
     * @param peerTimeout how long a member may take to answer that its snapshot is taken
     */
    public ClusterBackup(String self, Supplier<List<String>> members, Function<String, RemoteReplica> peers, NodeBackup local,
            BackupStore store, int keep, Duration peerTimeout, LongSupplier clock) {
        this.self = self;
        this.members = members;
        this.peers = peers;
        this.local = local;
        this.store = store;
        this.keep = keep;
        this.peerTimeout = peerTimeout;
        this.clock = clock;
    }

    /**
     * Begins a backup of every member. Fails with {@link IllegalStateException} when a backup with
     * the same id (begun within the same second) exists already.
     */
    public Started start() throws IOException {
        String id = BackupLayout.idAt(Instant.ofEpochMilli(clock.getAsLong()));
        if (store.getBytes(BackupLayout.started(id)).isPresent()) {
            throw new IllegalStateException("backup " + id + " began this second already");
        }
        List<String> taking = List.copyOf(members.get());
        Manifests.write(store, BackupLayout.started(id), new BackupStarted(BackupStarted.FORMAT, id, clock.getAsLong(), self, taking));
        Map<String, String> refused = new LinkedHashMap<>();
        for (String member : taking) {
            Optional<String> refusal = member.equals(self) ? local.take(id) : askPeer(member, id);
            refusal.ifPresent(why -> refused.put(member, why));
        }
        if (refused.isEmpty()) {
            log.info("backup {} begun on {} members", id, taking.size());
        } else {
            log.warn("backup {} begun, but without {}: it stays incomplete", id, refused);
        }
        return new Started(id, taking, refused);
    }

    private Optional<String> askPeer(String member, String id) {
        RemoteReplica peer = peers.apply(member);
        if (peer == null) {
            return Optional.of("no longer a member");
        }
        try {
            peer.snapshot(id).block(peerTimeout);
            return Optional.empty();
        } catch (RuntimeException e) {
            return Optional.of(String.valueOf(e.getMessage()));
        }
    }

    public Report report() throws IOException {
        BackupCatalog catalog = catalog();
        List<Summary> backups = catalog.entries().stream()
                .map(entry -> new Summary(entry.id(), entry.complete(),
                        entry.started() == null ? List.of() : entry.started().members(), entry.missing()))
                .toList();
        Long lastComplete = catalog.newestComplete().map(entry -> entry.startedAt().toEpochMilli()).orElse(null);
        return new Report(store.describe(), keep, lastComplete, local.progress().orElse(null), backups);
    }

    public BackupCatalog catalog() throws IOException {
        List<BackupStore.Stored> listing = store.list(BackupLayout.BACKUPS);
        try {
            return BackupCatalog.of(listing, id -> {
                try {
                    return Manifests.started(store, id);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } catch (UncheckedIOException e) {
            throw e.getCause(); // a backup.json unreadable or refused: the store failed, as the endpoints tell
        }
    }

    /**
     * After this node stored its manifest of backup {@code id}: if that made the backup complete,
     * removes what retention no longer keeps. A table file goes only when no kept backup lists
     * it (most are shared with newer backups).
     */
    public void finished(String id) {
        try {
            BackupCatalog catalog = catalog();
            if (catalog.find(id).filter(BackupCatalog.Entry::complete).isEmpty()) {
                return;
            }
            List<BackupCatalog.Entry> expired = catalog.expired(keep);
            if (expired.isEmpty()) {
                return;
            }
            Set<String> expiredIds = new HashSet<>();
            expired.forEach(entry -> expiredIds.add(entry.id()));
            Set<String> kept = new HashSet<>();
            Set<String> released = new HashSet<>();
            for (BackupCatalog.Entry entry : catalog.entries()) {
                Set<String> into = expiredIds.contains(entry.id()) ? released : kept;
                for (String member : entry.done()) {
                    Manifests.node(store, entry.id(), member).files().stream()
                            .map(NodeManifest.File::object)
                            .filter(BackupLayout::isSharedObject)
                            .forEach(into::add);
                }
            }
            released.removeAll(kept);
            List<String> doomed = new ArrayList<>(released);
            expired.forEach(entry -> doomed.addAll(entry.objects()));
            store.delete(doomed);
            log.info("backup retention (keep {}): removed backups {} and {} table files no kept backup uses", keep, expiredIds,
                    released.size());
        } catch (IOException | RuntimeException e) {
            log.warn("backup retention after {} failed: {}; it runs again after the next backup", id, e.toString());
        }
    }
}
