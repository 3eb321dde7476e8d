package dev.kvlab.backup;

import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The complete backups in a target: those whose {@code backup.json} is written
 * ({@link BackupLayout}). A backup still running, or one that failed, has node manifests but no
 * {@code backup.json}, and is not listed. Blocking.
 */
public final class BackupCatalog {

    /** What {@code restore --backup=latest} asks for. */
    public static final String LATEST = "latest";
    private static final String MANIFEST = "/backup.json";
    private static final Logger log = LoggerFactory.getLogger(BackupCatalog.class);

    private final BackupTarget target;

    public BackupCatalog(BackupTarget target) {
        this.target = target;
    }

    /** Every complete backup's manifest, newest (by its cut) first. */
    public List<ClusterManifest> complete() throws IOException {
        List<ClusterManifest> backups = new ArrayList<>();
        for (BackupTarget.StoredObject object : target.list(BackupLayout.BACKUPS)) {
            String key = object.key();
            if (key.endsWith(MANIFEST) && key.length() > BackupLayout.BACKUPS.length() + MANIFEST.length()) {
                String name = key.substring(BackupLayout.BACKUPS.length(), key.length() - MANIFEST.length());
                if (!name.contains("/")) {
                    read(name).ifPresent(backups::add);
                }
            }
        }
        backups.sort(Comparator.comparingLong(ClusterManifest::cutMillis).thenComparing(ClusterManifest::name).reversed());
        return backups;
    }

    /**
     * The complete backup named {@code name}, or the newest complete one for {@link #LATEST}; empty
     * when there is none.
     */
    public Optional<ClusterManifest> find(String name) throws IOException {
        if (LATEST.equals(name)) {
            return complete().stream().findFirst();
        }
        return read(BackupLayout.checkedName(name));
    }

    private Optional<ClusterManifest> read(String name) throws IOException {
        byte[] json;
        try {
            json = target.read(BackupLayout.clusterManifest(name));
        } catch (NoSuchFileException e) {
            return Optional.empty();
        }
        ClusterManifest manifest = Manifests.read(json, ClusterManifest.class, "backup " + name + "'s backup.json");
        if (!manifest.name().equals(name)) {
            throw new IllegalArgumentException("backup " + name + "'s backup.json names another backup, " + manifest.name());
        }
        return Optional.of(manifest);
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
