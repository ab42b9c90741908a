package io.ringkv.backup;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

/**
 * The backups a {@link BackupStore} holds, read from one listing of it: which exist, who takes
 * part in each, whose snapshots are stored, and so which are complete. Plain Java: the shell
 * passes the listing and a way to read each backup's {@code backup.json}.
 */
public final class BackupCatalog {

    /**
     * One backup.
     *
     * @param started  its {@code backup.json}; null if that is missing (a backup whose start failed)
     * @param done     the members whose manifest is stored
     * @param objects  every object of the backup's own (not the shared table files)
     */
    public record Entry(String id, BackupStarted started, List<String> done, List<String> objects) {

        /** Every member named at its start stored its snapshot. */
        public boolean complete() {
            return started != null && done.containsAll(started.members());
        }

        public Instant startedAt() {
            return BackupLayout.startOf(id);
        }

        /** The members whose snapshot is missing (all of them when nothing says who takes part). */
        public List<String> missing() {
            return started == null ? List.of() : started.members().stream().filter(member -> !done.contains(member)).toList();
        }
    }

    private final List<Entry> entries;

    private BackupCatalog(List<Entry> entries) {
        this.entries = entries;
    }

    /**
     * @param listing   the store's objects under {@code backups/}
     * @param startedOf a backup's {@code backup.json} by its id, if it is stored
     */
    public static BackupCatalog of(List<BackupStore.Stored> listing, Function<String, Optional<BackupStarted>> startedOf) {
        Map<String, List<String>> objectsById = new LinkedHashMap<>();
        for (BackupStore.Stored stored : listing) {
            BackupLayout.backupOf(stored.name()).filter(BackupLayout::isId)
                    .ifPresent(id -> objectsById.computeIfAbsent(id, ignored -> new ArrayList<>()).add(stored.name()));
        }
        List<Entry> entries = new ArrayList<>();
        objectsById.forEach((id, objects) -> {
            BackupStarted started = startedOf.apply(id).orElse(null);
            Set<String> stored = new HashSet<>(objects);
            List<String> done = started == null ? List.of()
                    : started.members().stream().filter(member -> stored.contains(BackupLayout.manifest(id, member))).toList();
            entries.add(new Entry(id, started, done, List.copyOf(objects)));
        });
        entries.sort(Comparator.comparing(Entry::id));
        return new BackupCatalog(List.copyOf(entries));
    }

    /** Oldest first. */
    public List<Entry> entries() {
        return entries;
    }

    public Optional<Entry> find(String id) {
        return entries.stream().filter(entry -> entry.id().equals(id)).findFirst();
    }

    /** The newest complete backup. */
    public Optional<Entry> newestComplete() {
        return entries.reversed().stream().filter(Entry::complete).findFirst();
    }

    /**
     * The backups retention removes when {@code keep} complete ones are kept: the older complete
     * ones, and the incomplete ones older than the newest complete one (a newer incomplete one may
     * still be uploading). Nothing while no backup is complete: a failing schedule never deletes
     * the last good backup.
     */
    public List<Entry> expired(int keep) {
        List<Entry> complete = entries.stream().filter(Entry::complete).toList();
        if (complete.isEmpty()) {
            return List.of();
        }
        String newestComplete = complete.getLast().id();
        String oldestKept = complete.get(Math.max(0, complete.size() - keep)).id();
        return entries.stream()
                .filter(entry -> entry.complete() ? entry.id().compareTo(oldestKept) < 0 : entry.id().compareTo(newestComplete) < 0)
                .toList();
    }

    /**
     * What a restore of {@code from} as of {@code asOf} streams, oldest first: {@code from} alone
     * without a point in time; with one, also the complete backups before it back to the newest
     * one that began at or before that time, since a key overwritten after the point in time
     * keeps its older version only in an earlier backup. (Any earlier backups than that would add
     * nothing the newest of them does not hold, except keys whose deletes were purged since.)
     *
     * @throws IllegalArgumentException naming what is wrong: no such backup, or it is incomplete
     */
    public List<Entry> restoreChain(String from, Optional<Instant> asOf) {
        Entry target = find(from).orElseThrow(() -> new IllegalArgumentException("no backup " + from + " in the store"));
        if (!target.complete()) {
            throw new IllegalArgumentException("backup " + from + " is incomplete: no snapshot of " + target.missing()
                    + (target.started() == null ? " (it has no backup.json)" : ""));
        }
        if (asOf.isEmpty()) {
            return List.of(target);
        }
        List<Entry> earlierComplete = entries.stream()
                .filter(entry -> entry.complete() && entry.id().compareTo(from) <= 0)
                .toList();
        int first = 0;
        for (int i = 0; i < earlierComplete.size(); i++) {
            if (!earlierComplete.get(i).startedAt().isAfter(asOf.get())) {
                first = i;
            }
        }
        return earlierComplete.subList(first, earlierComplete.size());
    }
}
