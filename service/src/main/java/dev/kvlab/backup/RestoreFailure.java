package dev.kvlab.backup;

/** Why a restore did not happen, with the exit code the restore command ends with. */
public final class RestoreFailure extends Exception {

    /** No such backup, or arguments that cannot be obeyed. */
    public static final int NO_SUCH_BACKUP = 2;
    /** The data directory holds data and {@code --force} was not given. */
    public static final int DATA_PRESENT = 3;
    /** A file or manifest of the backup is not what the backup says: nothing was changed. */
    public static final int NOT_VERIFIED = 4;

    private final int exitCode;

    public RestoreFailure(int exitCode, String message) {
        super(message);
        this.exitCode = exitCode;
    }

    public RestoreFailure(int exitCode, String message, Throwable cause) {
        super(message, cause);
        this.exitCode = exitCode;
    }

    public int exitCode() {
        return exitCode;
    }
}
