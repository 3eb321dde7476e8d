package dev.kvlab.backup;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The backups in a target: the complete ones (with their {@code backup.json}), and every backup's objects. Blocking. */
public final class BackupCatalog {

    private static final Logger log = LoggerFactory.getLogger(BackupCatalog.class);

    private BackupCatalog() {
    }

    /** The complete backups, newest first; a manifest that cannot be read is left out (and logged). */
    public static List<ClusterManifest> complete(BackupTarget target) throws IOException {
        List<ClusterManifest> backups = new ArrayList<>();
        for (String name : objectsByBackup(target).keySet()) {
            String key = BackupLayout.clusterManifest(name);
            if (!target.exists(key)) {
                continue;
            }
            try {
                backups.add(Manifests.read(target.read(key), ClusterManifest.class, key));
            } catch (IllegalArgumentException e) {
                log.warn("backup {} in {} is left out: {}", name, target.describe(), e.getMessage());
            }
        }
        backups.sort(Comparator.comparingLong(ClusterManifest::cutMillis).reversed().thenComparing(ClusterManifest::name));
        return backups;
    }

    /** Every backup's objects (manifests), by the backup's name. */
    static Map<String, List<BackupTarget.StoredObject>> objectsByBackup(BackupTarget target) throws IOException {
        Map<String, List<BackupTarget.StoredObject>> byName = new TreeMap<>();
        for (BackupTarget.StoredObject object : target.list(BackupLayout.BACKUPS)) {
            String rest = object.key().substring(BackupLayout.BACKUPS.length());
            int slash = rest.indexOf('/');
            if (slash <= 0) {
                continue;
            }
            String name = rest.substring(0, slash);
            try {
                BackupLayout.checkedName(name);
            } catch (IllegalArgumentException notOurs) {
                continue;
            }
            byName.computeIfAbsent(name, n -> new ArrayList<>()).add(object);
        }
        return byName;
    }

    /** Whether {@code objects} hold the backup's manifest, which makes it complete. */
    static boolean isComplete(String name, List<BackupTarget.StoredObject> objects) {
        String key = BackupLayout.clusterManifest(name);
        return objects.stream().anyMatch(object -> object.key().equals(key));
    }
}
