package dev.kvlab.backup;

import java.nio.file.Path;

/** The target {@code kvlab.backup.target} names: a directory here; an S3-compatible bucket is not available in this build. */
public final class BackupTargets {

    private BackupTargets() {
    }

    public static BackupTarget open(BackupProperties properties) {
        String target = properties.target().strip();
        if (target.startsWith("s3://")) {
            throw new IllegalArgumentException("S3 targets are not available in this build: " + target);
        }
        return new DirectoryTarget(Path.of(target));
    }
}
