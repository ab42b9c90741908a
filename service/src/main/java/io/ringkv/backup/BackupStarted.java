package io.ringkv.backup;

import java.util.List;

/**
 * A backup's {@code backup.json}, written before any node snapshots: when it began, which node
 * asked for it, and the members each expected to add its manifest.
 */
public record BackupStarted(int format, String id, long startedMillis, String coordinator, List<String> members) {

    public static final int FORMAT = 1;
}
