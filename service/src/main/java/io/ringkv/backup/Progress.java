package io.ringkv.backup;

/**
 * Where one backup or restore job on this node stands, as {@code /actuator/backup} and
 * {@code /actuator/restore} show it.
 *
 * @param job          the backup's id (for a restore: the backup restored)
 * @param phase        what it does now: {@code snapshot}, {@code upload}, {@code download}, {@code stream},
 *                     then {@code done} or {@code failed}
 * @param filesDone    files stored or fetched so far; for a backup, {@code filesSkipped} of them were
 *                     stored already (incremental)
 * @param bytesDone    bytes uploaded or downloaded so far
 * @param records      records streamed to their owners (a restore), or held by the snapshot (a backup)
 * @param error        why it failed, or null
 */
public record Progress(String job, String phase, long startedMillis, long finishedMillis, int filesTotal, int filesDone,
        int filesSkipped, long bytesTotal, long bytesDone, long records, String error) {

    public boolean running() {
        return finishedMillis == 0;
    }
}
