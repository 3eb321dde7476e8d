package dev.kvlab.backup;

import java.util.regex.Pattern;

/**
 * The keys of a backup target. A file is stored once under its content's SHA-256 and shared by
 * every backup and node that holds it (RocksDB's table files never change, so a backup sends only
 * the files that are new since the last one); a backup is its manifests:
 * <pre>
 * blobs/&lt;sha256&gt;                      a file's bytes
 * backups/&lt;name&gt;/nodes/&lt;index&gt;.json   a node's manifest ({@link NodeManifest}), once its files are all stored
 * backups/&lt;name&gt;/backup.json         the backup's manifest ({@link ClusterManifest}), written last:
 *                                    a backup without it is incomplete and is never restored
 * </pre>
 */
public final class BackupLayout {

    public static final String BLOBS = "blobs/";
    public static final String BACKUPS = "backups/";
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,127}");
    private static final Pattern SHA256 = Pattern.compile("[0-9a-f]{64}");

    private BackupLayout() {
    }

    public static String blob(String sha256) {
        if (!SHA256.matcher(sha256).matches()) {
            throw new IllegalArgumentException("not a SHA-256 in hex: " + sha256);
        }
        return BLOBS + sha256;
    }

    public static String backup(String name) {
        return BACKUPS + checkedName(name) + "/";
    }

    public static String clusterManifest(String name) {
        return backup(name) + "backup.json";
    }

    public static String nodeManifest(String name, int index) {
        return backup(name) + "nodes/" + index + ".json";
    }

    /** A backup's name as it may appear in a key: letters, digits, {@code . _ -}, at most 128. */
    public static String checkedName(String name) {
        if (name == null || !NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("a backup's name is 1 to 128 letters, digits, '.', '_' or '-', "
                    + "starting with a letter or digit; got '" + name + "'");
        }
        return name;
    }
}
