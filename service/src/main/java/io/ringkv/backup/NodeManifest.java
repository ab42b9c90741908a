package io.ringkv.backup;

import java.util.List;

/**
 * One node's part of a backup, its {@code manifest.json}: written once every file it lists is
 * stored, so its presence means the node's snapshot is whole.
 *
 * @param format          {@link #FORMAT}: what a restore checks before it reads the rest
 * @param node            the node's name on the ring
 * @param ring            the ring's members when the snapshot was taken
 * @param takenMillis     when the checkpoint was taken (wall clock)
 * @param storeIdentity   the RocksDB store's identity: its table files live under it
 * @param records         keys held, tombstones included
 * @param tombstones      of them, deletes
 * @param oldestTimestamp the oldest version held (hybrid clock), 0 if none
 * @param newestTimestamp the newest version held, 0 if none: a point in time later than this
 *                        needs nothing newer from this node
 * @param files           the checkpoint's files, each with its object and checksum
 */
public record NodeManifest(int format, String backup, String node, List<String> ring, long takenMillis, String storeIdentity,
        long records, long tombstones, long oldestTimestamp, long newestTimestamp, List<File> files) {

    public static final int FORMAT = 1;

    /** A checkpoint file: its name there, where it is stored, its size, and its CRC-32C in hex. */
    public record File(String name, String object, long bytes, String crc32c) {
    }

    public long bytes() {
        return files.stream().mapToLong(File::bytes).sum();
    }
}
