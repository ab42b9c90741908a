package io.ringkv.backup;

import java.util.concurrent.atomic.AtomicLong;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * Backup and restore metrics of this node. {@code ringkv_backup_last_success_seconds} is what the
 * chart's alert watches: it fires when it falls two schedules behind.
 */
public final class BackupMetrics {

    private final AtomicLong lastSuccessSeconds = new AtomicLong();
    private final Counter bytesUploaded;
    private final Counter failures;
    private final Counter recordsRestored;

    public BackupMetrics(MeterRegistry meters) {
        Gauge.builder("ringkv.backup.last.success", lastSuccessSeconds, AtomicLong::get)
                .description("When this node last stored its snapshot of a backup, in seconds since the epoch (0: not since it started)")
                .baseUnit("seconds")
                .register(meters);
        bytesUploaded = Counter.builder("ringkv.backup.uploaded").baseUnit("bytes")
                .description("Bytes of snapshots this node uploaded (files stored by earlier backups are not sent again)")
                .register(meters);
        failures = Counter.builder("ringkv.backup.failures").description("This node's snapshots that failed").register(meters);
        recordsRestored = Counter.builder("ringkv.restore.records")
                .description("Records this node streamed from backups to their owners").register(meters);
    }

    void uploaded(long bytes) {
        bytesUploaded.increment(bytes);
    }

    void succeeded(long millis) {
        lastSuccessSeconds.set(millis / 1000);
    }

    void failed() {
        failures.increment();
    }

    void restored(long records) {
        recordsRestored.increment(records);
    }
}
