package dev.kvlab.backup;

/**
 * The target of {@code kvlab.backup.target}, opened once at start; none when it is empty, and then
 * every backup is refused with 503 saying so.
 */
public final class ConfiguredTarget implements AutoCloseable {

    private final BackupTarget target;

    public ConfiguredTarget(BackupProperties properties) {
        this.target = properties.enabled() ? BackupTargets.open(properties) : null;
    }

    ConfiguredTarget(BackupTarget target) {
        this.target = target;
    }

    /** The target; {@link BackupFailure} 503 when none is configured. */
    public BackupTarget get() {
        if (target == null) {
            throw BackupFailure.unavailable("no backup target is configured on this node: set kvlab.backup.target "
                    + "(a directory every node sees, or s3://bucket/prefix) on every node");
        }
        return target;
    }

    /** The target as a person reads it; empty when there is none. */
    public String describe() {
        return target == null ? "" : target.describe();
    }

    @Override
    public void close() {
        if (target != null) {
            target.close();
        }
    }
}
