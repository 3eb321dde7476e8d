package dev.kvlab.backup;

/**
 * A backup, or a node's part of one, that cannot be taken, with the HTTP status that says why: 400
 * a bad request, 409 one is running already, 503 no target or a node that cannot take its part.
 */
public final class BackupFailure extends RuntimeException {

    private final int status;

    public BackupFailure(int status, String message) {
        super(message);
        this.status = status;
    }

    public BackupFailure(int status, String message, Throwable cause) {
        super(message, cause);
        this.status = status;
    }

    public static BackupFailure badRequest(String message) {
        return new BackupFailure(400, message);
    }

    public static BackupFailure busy(String message) {
        return new BackupFailure(409, message);
    }

    public static BackupFailure unavailable(String message) {
        return new BackupFailure(503, message);
    }

    public int status() {
        return status;
    }
}
