package dev.kvlab.backup;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Removes the backups no longer kept ({@code kvlab.backup.keep-last}, {@code max-age}; the newest is
 * always kept), each manifest first so that it is never seen complete and partial; then the parts
 * of backups that never completed, once older than {@code timeout}; then the blobs that no backup's
 * manifest names, once older than {@code timeout}, so the blobs of a backup still being stored,
 * whose manifests are not written yet, stay. Blocking.
 */
public final class Retention {

    private static final Logger log = LoggerFactory.getLogger(Retention.class);

    private final int keepLast;
    private final Duration maxAge;
    private final Duration timeout;

    public Retention(int keepLast, Duration maxAge, Duration timeout) {
        this.keepLast = keepLast;
        this.maxAge = maxAge;
        this.timeout = timeout;
    }

    /** What one pass removed. */
    public record Removed(List<String> backups, int incompleteParts, int blobs, long blobBytes) {
    }

    public Removed apply(BackupTarget target, long nowMillis) throws IOException {
        List<ClusterManifest> complete = BackupCatalog.complete(target);
        List<String> removed = new ArrayList<>();
        for (int i = 0; i < complete.size(); i++) {
            ClusterManifest backup = complete.get(i);
            boolean tooMany = keepLast > 0 && i >= keepLast;
            boolean tooOld = !maxAge.isZero() && i > 0 && nowMillis - backup.cutMillis() > maxAge.toMillis();
            if (tooMany || tooOld) {
                target.delete(BackupLayout.clusterManifest(backup.name()));
                removed.add(backup.name());
            }
        }
        long cutoff = nowMillis - timeout.toMillis();
        int incomplete = 0;
        Set<String> referenced = new HashSet<>();
        for (Map.Entry<String, List<BackupTarget.StoredObject>> backup : BackupCatalog.objectsByBackup(target).entrySet()) {
            String name = backup.getKey();
            List<BackupTarget.StoredObject> objects = backup.getValue();
            boolean whole = BackupCatalog.isComplete(name, objects);
            boolean stale = objects.stream().allMatch(object -> object.modifiedMillis() < cutoff);
            if (!whole && (removed.contains(name) || stale)) {
                for (BackupTarget.StoredObject object : objects) {
                    target.delete(object.key());
                }
                if (!removed.contains(name)) {
                    incomplete++;
                }
                continue;
            }
            for (BackupTarget.StoredObject object : objects) {
                if (object.key().endsWith(".json") && object.key().contains("/nodes/")) {
                    NodeManifest node = Manifests.read(target.read(object.key()), NodeManifest.class, object.key());
                    node.files().forEach(file -> referenced.add(file.sha256()));
                }
            }
        }
        int blobs = 0;
        long blobBytes = 0;
        for (BackupTarget.StoredObject blob : target.list(BackupLayout.BLOBS)) {
            String sha = blob.key().substring(BackupLayout.BLOBS.length());
            if (!referenced.contains(sha) && blob.modifiedMillis() < cutoff) {
                target.delete(blob.key());
                blobs++;
                blobBytes += blob.bytes();
            }
        }
        if (!removed.isEmpty() || incomplete > 0 || blobs > 0) {
            log.info("backup retention in {}: removed backups {}, {} parts of backups that never completed, {} blobs ({} bytes) no backup uses",
                    target.describe(), removed, incomplete, blobs, blobBytes);
        }
        return new Removed(removed, incomplete, blobs, blobBytes);
    }
}
