package io.ringkv.replication;

import java.util.Optional;

/** What takes this node's snapshot when a member coordinating a backup asks for it ({@code backup.NodeBackup}). */
@FunctionalInterface
public interface Snapshots {

    /** Refuses every snapshot: a node without {@code ringkv.backup.target}. */
    Snapshots NOT_CONFIGURED = backup -> Optional.of("backups are not configured on this node");

    /** Takes the snapshot for the backup of that id: empty once taken, else why not. */
    Optional<String> take(String backup);
}
