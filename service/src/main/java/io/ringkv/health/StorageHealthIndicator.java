package io.ringkv.health;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.util.unit.DataSize;

import io.ringkv.storage.RocksStore;

/**
 * The {@code storage} health contributor: RocksDB open, the data directory writable, and enough
 * free disk for writes to land. Part of readiness: a node that cannot store should get no traffic.
 */
public final class StorageHealthIndicator extends AbstractHealthIndicator {

    private final RocksStore store;
    private final Path dataDir;
    private final DataSize minimumFreeDisk;

    public StorageHealthIndicator(RocksStore store, Path dataDir, DataSize minimumFreeDisk) {
        super("storage health check failed");
        this.store = store;
        this.dataDir = dataDir;
        this.minimumFreeDisk = minimumFreeDisk;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) throws IOException {
        boolean open = store.isOpen();
        boolean writable = isWritable();
        long free = Files.getFileStore(dataDir).getUsableSpace();
        boolean enoughDisk = free >= minimumFreeDisk.toBytes();
        builder.status(open && writable && enoughDisk ? Status.UP : Status.DOWN)
                .withDetail("rocksdb", open ? "open" : "closed")
                .withDetail("dataDir", dataDir.toString())
                .withDetail("writable", writable)
                .withDetail("freeBytes", free)
                .withDetail("minimumFreeBytes", minimumFreeDisk.toBytes());
    }

    private boolean isWritable() {
        try {
            Path probe = Files.createTempFile(dataDir, ".health", ".tmp");
            Files.delete(probe);
            return true;
        } catch (IOException | SecurityException e) {
            return false;
        }
    }
}
