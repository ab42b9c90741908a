package io.ringkv.backup;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Where each object of a backup lives in the {@link BackupStore}, and what the names mean. Plain Java.
 *
 * <pre>
 *   files/&lt;store identity&gt;/&lt;table file&gt;           a node's SST and blob files, shared by every backup
 *                                                  that holds them: uploaded once (incremental)
 *   backups/&lt;id&gt;/backup.json                      written first: who takes part ({@link BackupStarted})
 *   backups/&lt;id&gt;/nodes/&lt;node&gt;/&lt;file&gt;              the rest of a node's checkpoint (MANIFEST, OPTIONS, CURRENT)
 *   backups/&lt;id&gt;/nodes/&lt;node&gt;/manifest.json       written last, once its files are stored ({@link NodeManifest})
 * </pre>
 *
 * A table file's name is unique within one RocksDB store for good (numbers are never reused), and
 * the store's identity (its {@code IDENTITY} file, new with every new store) tells a wiped and
 * refilled node's files from its earlier ones. A backup is complete when every node named in its
 * {@code backup.json} has its {@code manifest.json}.
 */
public final class BackupLayout {

    /** A backup's id: the UTC second it began, which sorts as time does. */
    private static final DateTimeFormatter ID = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH-mm-ss'Z'").withZone(ZoneOffset.UTC);
    private static final Pattern ID_SHAPE = Pattern.compile("\\d{4}-\\d{2}-\\d{2}T\\d{2}-\\d{2}-\\d{2}Z");
    private static final Pattern UNSAFE = Pattern.compile("[^A-Za-z0-9.-]");
    /** RocksDB's {@code IDENTITY}: a UUID, in the 36 characters of RFC 4122. */
    private static final Pattern STORE_IDENTITY = Pattern.compile("\\p{XDigit}{8}-\\p{XDigit}{4}-\\p{XDigit}{4}-\\p{XDigit}{4}-\\p{XDigit}{12}");
    /**
     * A checkpoint's file name, such as {@code 000012.sst}, {@code MANIFEST-000005} or {@code CURRENT}:
     * one path segment, never {@code .} or {@code ..} nor a dot file, and short.
     */
    private static final Pattern FILE_NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,127}");
    /** The longest member name a {@code backup.json} may hold: an object name segment is made of it. */
    private static final int MAX_NODE_NAME = 253;

    static final String BACKUPS = "backups/";
    static final String FILES = "files/";
    static final String STARTED = "backup.json";
    static final String MANIFEST = "manifest.json";

    private BackupLayout() {
    }

    public static String idAt(Instant started) {
        return ID.format(started);
    }

    /** Whether {@code id} is a backup id; what a client names is checked against this before it is used in a name. */
    public static boolean isId(String id) {
        return id != null && ID_SHAPE.matcher(id).matches();
    }

    /** Whether {@code identity} is a RocksDB store's identity: it names a folder of the store, and a local one on restore. */
    static boolean isStoreIdentity(String identity) {
        return identity != null && STORE_IDENTITY.matcher(identity).matches();
    }

    /** Whether {@code name} is a checkpoint's file name: a restore writes a file of that name. */
    static boolean isFileName(String name) {
        return name != null && FILE_NAME.matcher(name).matches();
    }

    /** Whether {@code node} can be a member's name: its folder ({@link #node}) is one object name segment. */
    static boolean isNodeName(String node) {
        return node != null && !node.isEmpty() && node.length() <= MAX_NODE_NAME && !nodeSegment(node).startsWith(".");
    }

    /** When the backup with this id began. */
    public static Instant startOf(String id) {
        try {
            return Instant.from(ID.parse(id));
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException("not a backup id: " + id, e);
        }
    }

    static String started(String id) {
        return BACKUPS + id + "/" + STARTED;
    }

    /** A node's folder in a backup: its name (a URL) with every character but letters, digits, dots and dashes made a dash. */
    static String node(String id, String node) {
        return BACKUPS + id + nodeFolder(node);
    }

    /** What every backup's folder of that node ends with. */
    private static String nodeFolder(String node) {
        return "/nodes/" + nodeSegment(node) + "/";
    }

    private static String nodeSegment(String node) {
        return UNSAFE.matcher(node).replaceAll("-");
    }

    /** What the name of every manifest of that node ends with, whichever the backup. */
    static String manifestSuffix(String node) {
        return nodeFolder(node) + MANIFEST;
    }

    static String manifest(String id, String node) {
        return node(id, node) + MANIFEST;
    }

    /** Table files are shared between backups; the rest of a checkpoint is the backup's own. */
    static boolean isShared(String fileName) {
        return fileName.endsWith(".sst") || fileName.endsWith(".blob");
    }

    /** Whether an object is a shared table file. */
    static boolean isSharedObject(String object) {
        return object.startsWith(FILES);
    }

    static String object(String id, String node, String storeIdentity, String fileName) {
        return isShared(fileName) ? FILES + storeIdentity + "/" + fileName : node(id, node) + fileName;
    }

    /** The id of the backup an object belongs to, if it belongs to one (not a shared file). */
    static Optional<String> backupOf(String object) {
        if (!object.startsWith(BACKUPS)) {
            return Optional.empty();
        }
        int end = object.indexOf('/', BACKUPS.length());
        return end < 0 ? Optional.empty() : Optional.of(object.substring(BACKUPS.length(), end));
    }
}
